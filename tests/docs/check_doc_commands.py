#!/usr/bin/env python3
"""Every command the documentation shows, checked in the form shown.

Reads the ```sh blocks of README.md and docs/*.md (one command a line) and, from a scratch
directory that mirrors the repository's top level, checks each command:

* tether's programs (tether, tether-remote, tether-ground, tether-simarm, tether-arm,
  tether-linkem, tether-compare-resolvers, tether-seed-pictures, tether-task-schema, by their
  installed names or as build/<preset>/.../NAME) are parsed against their own options with
  TETHER_CHECK_COMMAND_LINE=1 (tether::cli::parse stops after the parse): an unknown or
  renamed option, a bad value or a missing argument fails. `--help` and `--version` run as
  shown.
* the repository's scripts (bash deploy/X.sh, tests/.../X.sh, .ci/run, tether-make-pki) must
  exist, and every --option given must be one the script's own option parsing names.
* short file commands (cp, mkdir, cat, ls, cd) run as shown in the scratch directory, so a
  page can copy a shipped task and upload the copy.
* anything else must be a known outside tool (apt, cmake, git, ...), not run.

Usage: check_doc_commands.py --source DIR --build DIR [FILE.md ...]
Exit status 1 with every failing command, its page and line.
"""

import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = {
    "tether": "local_site/apps/tether",
    "tether-ground": "local_site/apps/tether-ground",
    "tether-remote": "remote_site/apps/tether-remote",
    "tether-simarm": "remote_site/apps/tether-simarm",
    "tether-compare-resolvers": "remote_site/apps/tether-compare-resolvers",
    "tether-seed-pictures": "remote_site/apps/tether-seed-pictures",
    "tether-arm": "common/tether-arm",
    "tether-linkem": "common/tether-linkem",
    "tether-task-schema": "proto/tether-task-schema",
}
SCRIPTS = {"tether-make-pki": "deploy/make-pki.sh"}
RUN_AS_SHOWN = {"cp", "mkdir", "cat", "ls", "cd", "echo", "true"}
OUTSIDE_TOOLS = {
    "apt", "apt-get", "sudo", "cmake", "ctest", "cpack", "ninja", "git", "dpkg", "systemctl",
    "journalctl", "systemd-analyze", "ip", "npm", "npx", "node", "xvfb-run", "chromium", "ssh",
    "scp", "openssl", "curl", "man", "help2man", "export", "source", "kill", "pkill", "sleep",
    "tar", "less", "grep", "sed", "awk", "python3", "foxglove-studio", "plotjuggler", "docker",
    "wget", "iptables", "nft", "ufw", "setcap", "useradd", "install", "chown", "chmod", "ln",
    "rm", "mv", "diff", "wc", "head", "tail", "watch", "ping", "ss", "tcpdump", "perf",
    "valgrind", "gdb", "clang-tidy", "clang-format", "tee", "xdg-open", "firefox", "env",
}


def blocks(path):
    """(line number, command) for each line of each ```sh block."""
    out = []
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if inside:
                inside = False
            else:
                inside = stripped[3:].strip() in ("sh", "bash", "shell", "console")
            continue
        if inside and stripped and not stripped.startswith("#"):
            out.append((number, stripped))
    return out


def script_options(script_path):
    """The --options a script's own parsing names (case arms, getopt strings, comparisons)."""
    text = script_path.read_text(encoding="utf-8", errors="replace")
    return set(re.findall(r"(--[A-Za-z0-9][A-Za-z0-9-]*)", text))


def split_commands(line):
    """A line's commands: split at && ; | (a pipe's later stages and redirections dropped)."""
    parts = re.split(r"\s*(?:&&|;|\|\|)\s*", line)
    commands = []
    for part in parts:
        first = part.split(" | ")[0]
        first = re.split(r"\s(?:>|>>|2>|2>&1|<)\s?", " " + first)[0].strip()
        if first:
            commands.append(first)
    return commands


class Checker:
    def __init__(self, source, build):
        self.source = source
        self.build = build
        self.scratch = pathlib.Path(tempfile.mkdtemp(prefix="tether-docs-"))
        for entry in source.iterdir():
            if entry.name in (".git",):
                continue
            (self.scratch / entry.name).symlink_to(entry)
        self.cwd = self.scratch
        self.failures = []

    def writable_here(self):
        """Whether the current directory is the scratch directory's own (not the repository's)."""
        try:
            parts = self.cwd.relative_to(self.scratch).parts
        except ValueError:
            return False
        return not parts or not (self.scratch / parts[0]).is_symlink()

    def stand_in(self, name):
        """An empty file at `name` under the scratch directory, never inside the repository."""
        path = pathlib.Path(name)
        if path.is_absolute() or ".." in path.parts:
            return False
        if not self.writable_here():
            return False
        target = self.cwd / path
        top = self.scratch / target.relative_to(self.scratch).parts[0]
        if top.is_symlink() or target.exists():
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("")
        return True

    def program_path(self, word):
        name = os.path.basename(word)
        if word in PROGRAMS:
            return self.build / PROGRAMS[word]
        m = re.match(r"(?:\./)?build/[^/]+/(.+)$", word)
        if m and name in PROGRAMS:
            return self.build / m.group(1)
        return None

    def check(self, page, number, command):
        try:
            words = shlex.split(command, comments=True)
        except ValueError as e:
            return f"cannot be split into words: {e}"
        env = dict(os.environ)
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        if not words:
            return None
        if words[0] == "sudo":
            words = words[1:] or ["true"]
        head = words[0]
        program = self.program_path(head)
        if program is not None:
            if not program.exists():
                return f"{head}: {program} is not built"
            if "--help" not in words and "-h" not in words and "--version" not in words:
                env["TETHER_CHECK_COMMAND_LINE"] = "1"
            for _ in range(8):
                try:
                    result = subprocess.run([str(program)] + words[1:], cwd=self.cwd, env=env,
                                            capture_output=True, text=True, timeout=20)
                except subprocess.TimeoutExpired:
                    return "still running after 20 s: the command line was not only parsed"
                # A file the reader makes on their machine (credentials, a users file): an
                # empty stand-in in the scratch directory, and the parse again.
                missing = re.search(r"File does not exist: (\S+)", result.stderr)
                if result.returncode == 0 or not missing or not self.stand_in(missing.group(1)):
                    break
            if result.returncode != 0:
                said = (result.stderr or result.stdout).strip().splitlines()[:3]
                return f"exit {result.returncode}: " + " / ".join(said)
            return None
        script = None
        args = words[1:]
        if head in ("bash", "sh") and len(words) > 1:
            script, args = words[1], words[2:]
        elif head in SCRIPTS:
            script = SCRIPTS[head]
        elif "/" in head and (head.endswith(".sh") or head.endswith(".ci/run")):
            script = head
        if script is not None:
            path = (self.cwd / script).resolve()
            if not path.exists():
                return f"{script}: no such script"
            known = script_options(path)
            unknown = [a.split("=")[0] for a in args
                       if a.startswith("--") and a.split("=")[0] not in known]
            if unknown:
                return f"{script} does not take {', '.join(unknown)}"
            return None
        if head in RUN_AS_SHOWN:
            if head == "cd":
                target = pathlib.Path(os.path.normpath(self.cwd / (words[1] if len(words) > 1 else ".")))
                if not target.is_dir():
                    return f"cd: {words[1]}: no such directory"
                self.cwd = target
                return None
            if not self.writable_here():
                return None  # inside the repository itself: shown, not run
            result = subprocess.run(words, cwd=self.cwd, env=env, capture_output=True, text=True,
                                    timeout=60)
            if result.returncode != 0:
                return f"exit {result.returncode}: {result.stderr.strip()}"
            return None
        if head in OUTSIDE_TOOLS:
            return None
        return f"'{head}' is neither a tether program, a script of the repository nor a known tool"

    def run(self, pages):
        checked = 0
        for page in pages:
            self.cwd = self.scratch
            for number, line in blocks(page):
                for command in split_commands(line):
                    checked += 1
                    problem = self.check(page, number, command)
                    if problem:
                        rel = os.path.relpath(page, self.source)
                        self.failures.append(f"{rel}:{number}: {command}\n    {problem}")
        shutil.rmtree(self.scratch, ignore_errors=True)
        return checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, type=pathlib.Path)
    parser.add_argument("--build", required=True, type=pathlib.Path)
    parser.add_argument("pages", nargs="*", type=pathlib.Path)
    a = parser.parse_args()
    source = a.source.resolve()
    pages = [p.resolve() for p in a.pages] or \
        [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    checker = Checker(source, a.build.resolve())
    checked = checker.run(pages)
    if checker.failures:
        print(f"{len(checker.failures)} of {checked} documented commands fail:")
        print("\n".join(checker.failures))
        return 1
    print(f"all {checked} commands in {len(pages)} pages check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
