#!/usr/bin/env node
// Shows that check-mcap.mjs can pass and can fail: writes MCAP files with @mcap/core's own
// McapWriter (a protobuf schema from a small FileDescriptorSet built here with protobufjs, a
// JSON channel, zstd chunks when @foxglove/wasm-zstd can compress, else uncompressed; plus an
// uncompressed variant), expects the checker to find them ok, then damages copies, one fault
// each, and expects each to fail for that fault's reason:
//   a flipped byte inside a chunk (zstd and uncompressed), a file cut mid-chunk (truncated) or
//   right after its Header, a message that does not decode with its schema (protobuf and
//   JSON), a wrong Statistics count (message_count, channel_message_counts), a Message Index
//   entry pointing at the wrong offset, a broken summary CRC, a missing expected topic.
// Damaged files get their data-section and summary CRCs recomputed (fixCrcs) unless the CRC is
// the fault, so each is caught by the check meant for it, not by a CRC that any change breaks.
// Also runs the CLI (text, --json, --allow-truncated) and checks its exit codes.
//
//   node tests/mcap_reader/selftest.mjs [--keep]   (--keep: leave the temp dir, print it)
// Exit code 0 only if every case behaves as expected.

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { McapWriter } from "@mcap/core";
import { crc32 } from "@foxglove/crc";
import protobuf from "protobufjs";
import descriptor from "protobufjs/ext/descriptor/index.js";
import { checkMcapFile, formatResult } from "./check-mcap.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const keep = process.argv.includes("--keep");
const T0 = 1_700_000_000_000_000_000n; // log times from here, 1 ms apart

// A FileDescriptorSet the way protoc --include_imports writes one (and tether's
// protobuf_schema()): the imported file first, type names fully qualified.
const fileDescriptorSet = descriptor.FileDescriptorSet.fromObject({
  file: [
    {
      name: "tether/selftest/stamp.proto",
      package: "tether.selftest.common",
      syntax: "proto3",
      messageType: [{ name: "Stamp", field: [
        { name: "sec", number: 1, label: "LABEL_OPTIONAL", type: "TYPE_INT64", jsonName: "sec" },
        { name: "nsec", number: 2, label: "LABEL_OPTIONAL", type: "TYPE_INT32", jsonName: "nsec" },
      ] }],
    },
    {
      name: "tether/selftest/pose.proto",
      package: "tether.selftest",
      dependency: ["tether/selftest/stamp.proto"],
      syntax: "proto3",
      messageType: [{ name: "Pose", field: [
        { name: "stamp", number: 1, label: "LABEL_OPTIONAL", type: "TYPE_MESSAGE", typeName: ".tether.selftest.common.Stamp", jsonName: "stamp" },
        { name: "frame", number: 2, label: "LABEL_OPTIONAL", type: "TYPE_STRING", jsonName: "frame" },
        { name: "q", number: 3, label: "LABEL_REPEATED", type: "TYPE_DOUBLE", jsonName: "q" },
        { name: "mode", number: 4, label: "LABEL_OPTIONAL", type: "TYPE_ENUM", typeName: ".tether.selftest.Pose.Mode", jsonName: "mode" },
      ], enumType: [{ name: "Mode", value: [{ name: "IDLE", number: 0 }, { name: "MOVING", number: 1 }] }] }],
    },
  ],
});
const schemaData = descriptor.FileDescriptorSet.encode(fileDescriptorSet).finish();
// Messages are encoded with a Root built from those same bytes, as any reader would.
const Pose = protobuf.Root.fromDescriptor(descriptor.FileDescriptorSet.decode(schemaData)).lookupType("tether.selftest.Pose");

let zstd; // @foxglove/wasm-zstd: @mcap/support's zstd decompressor, which can also compress
try {
  zstd = (await import("@foxglove/wasm-zstd")).default;
  await zstd.isLoaded;
} catch {
  zstd = undefined;
}

/** Writes a small recording; `badPose`/`badStatus`: indexes of messages given bad data. */
async function writeRecording(path, { compression = zstd ? "zstd" : "", count = 600, badPose, badStatus } = {}) {
  const parts = [];
  let position = 0n;
  const writable = {
    position: () => position,
    write: async (buf) => {
      parts.push(Buffer.from(buf)); // a copy: the writer reuses its buffer
      position += BigInt(buf.byteLength);
    },
  };
  const writer = new McapWriter({
    writable,
    chunkSize: 4096, // several chunks from a few hundred messages
    compressChunk: compression === "zstd" ? (data) => ({ compression: "zstd", compressedData: zstd.compress(data, 3) }) : undefined,
  });
  await writer.start({ profile: "", library: "tether mcap_reader selftest" });
  const poseSchema = await writer.registerSchema({ name: "tether.selftest.Pose", encoding: "protobuf", data: schemaData });
  const statusSchema = await writer.registerSchema({
    name: "Status", encoding: "jsonschema",
    data: new TextEncoder().encode(JSON.stringify({ type: "object", properties: { ok: { type: "boolean" } } })),
  });
  const pose = await writer.registerChannel({ schemaId: poseSchema, topic: "/pose", messageEncoding: "protobuf", metadata: new Map() });
  const status = await writer.registerChannel({ schemaId: statusSchema, topic: "/status", messageEncoding: "json", metadata: new Map() });
  await writer.addMetadata({ name: "tether.site", metadata: new Map([["site", "selftest"]]) });
  for (let i = 0; i < count; i++) {
    const logTime = T0 + BigInt(i) * 1_000_000n;
    const t = { sec: Number(logTime / 1_000_000_000n), nsec: Number(logTime % 1_000_000_000n) };
    let data;
    if (i % 4 === 3) {
      data = i === badStatus ? new TextEncoder().encode("{not json") : new TextEncoder().encode(JSON.stringify({ ok: i % 8 === 3, i }));
      await writer.addMessage({ channelId: status, sequence: i, logTime, publishTime: logTime, data });
    } else {
      // A length-delimited field 2 claiming 100 bytes of which 1 follows: not decodable.
      data = i === badPose ? Uint8Array.from([0x12, 0x64, 0x41]) : Pose.encode({ stamp: t, frame: "base", q: [i, i / 2, -i], mode: i % 2 }).finish();
      await writer.addMessage({ channelId: pose, sequence: i, logTime, publishTime: logTime, data });
    }
  }
  await writer.addAttachment({ name: "arm.urdf", logTime: T0, createTime: T0, mediaType: "text/xml", data: new TextEncoder().encode("<robot/>") });
  await writer.end();
  await writeFile(path, Buffer.concat(parts));
}

// --- Just enough MCAP parsing to damage files on purpose. ---
function records(buf, from, to) {
  const out = [];
  for (let p = from; p < to; ) {
    const len = Number(buf.readBigUInt64LE(p + 1));
    out.push({ op: buf[p], offset: p, content: p + 9, end: p + 9 + len });
    p += 9 + len;
  }
  return out;
}
function layout(buf) {
  const footer = buf.length - 8 - 29;
  const summaryStart = Number(buf.readBigUInt64LE(footer + 9));
  const dataEnd = summaryStart - 13;
  const data = records(buf, 8, dataEnd);
  return {
    footer, summaryStart, dataEnd,
    chunks: data.filter((r) => r.op === 0x06),
    messageIndexes: data.filter((r) => r.op === 0x07),
    statistics: records(buf, summaryStart, footer).find((r) => r.op === 0x0b),
  };
}
/** Recomputes the Data End's data-section CRC and the Footer's summary CRC. */
function fixCrcs(buf) {
  const l = layout(buf);
  buf.writeUInt32LE(crc32(buf.subarray(0, l.dataEnd)), l.dataEnd + 9);
  buf.writeUInt32LE(crc32(buf.subarray(l.summaryStart, l.footer + 1 + 8 + 8 + 8)), l.footer + 25);
  return buf;
}

// --- The cases. ---
const dir = await mkdtemp(join(tmpdir(), "mcap-selftest-"));
let passed = 0, failed = 0;
function expect(name, ok, result, why) {
  if (ok) {
    passed++;
    console.log(`PASS ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${why}`);
    if (result) console.log(formatResult(result).replace(/^/gm, "    "));
  }
}
const has = (r, re) => r.errors.some((e) => re.test(e));
async function variant(name, from, damage) {
  const buf = Buffer.from(await readFile(from));
  const path = join(dir, `${name}.mcap`);
  await writeFile(path, damage(buf, layout(buf)) ?? buf);
  return path;
}

try {
  const good = join(dir, "good.mcap");
  const plain = join(dir, "good-uncompressed.mcap");
  await writeRecording(good);
  await writeRecording(plain, { compression: "" });
  console.log(`writing with ${zstd ? "zstd" : "no (wasm-zstd could not load)"} compression in ${good}`);

  for (const [name, path] of [["good", good], ["good-uncompressed", plain]]) {
    const r = await checkMcapFile(path, { expectTopics: ["/pose", "/status"] });
    console.log(formatResult(r));
    const counts = Object.fromEntries(r.channels.map((c) => [c.topic, c.count]));
    expect(`${name} is ok`, r.ok && r.status === "ok" && r.messages === 600 && counts["/pose"] === 450 && counts["/status"] === 150 &&
           r.schemas.includes("tether.selftest.Pose"), r, "expected ok with 450 /pose and 150 /status messages");
  }
  const goodLayout = layout(await readFile(good));
  expect("good has several chunks", goodLayout.chunks.length >= 3, undefined, `${goodLayout.chunks.length} chunks`);

  // A flipped byte inside a chunk's records: the chunk's CRC (or zstd itself) must object.
  for (const [name, from] of [["flip-zstd", good], ["flip-uncompressed", plain]]) {
    let at;
    const path = await variant(name, from, (buf, l) => {
      at = l.chunks[1];
      buf[at.end - 20] ^= 0x40; // inside the last message's data
      return fixCrcs(buf);
    });
    const r = await checkMcapFile(path);
    const re = new RegExp(`^chunk at offset ${at.offset}: .*(CRC|[Dd]ecompress|zstd|[Cc]orrupt)`);
    expect(`${name} fails on the chunk`, r.status === "FAILED" && has(r, re), r, `expected an error matching ${re}`);
  }

  // Cut mid-chunk: `truncated`; an error without --allow-truncated, accepted with it; the
  // complete chunks before the cut are still read and decoded.
  const cut = await variant("cut-mid-chunk", good, (buf, l) => buf.subarray(0, l.chunks[2].offset + Math.floor((l.chunks[2].end - l.chunks[2].offset) / 2)));
  {
    const strict = await checkMcapFile(cut);
    expect("cut mid-chunk is an error by default", strict.status === "truncated" && !strict.ok && has(strict, /truncated/), strict, "expected status truncated, not ok");
    const lenient = await checkMcapFile(cut, { allowTruncated: true });
    expect("cut mid-chunk is accepted with allowTruncated", lenient.status === "truncated" && lenient.ok && lenient.messages > 0 && lenient.messages < 600,
           lenient, "expected ok, with the first two chunks' messages");
  }
  const cutHeader = await variant("cut-after-header", good, (buf) => buf.subarray(0, records(buf, 8, 9 + Number(buf.readBigUInt64LE(9)))[0].end));
  {
    const r = await checkMcapFile(cutHeader, { allowTruncated: true });
    expect("cut after the Header is truncated with 0 messages", r.status === "truncated" && r.ok && r.messages === 0, r, "expected truncated, 0 messages");
  }

  // Messages that do not decode with their schema.
  {
    const path = join(dir, "bad-message.mcap");
    await writeRecording(path, { badPose: 100, badStatus: 203 });
    const r = await checkMcapFile(path);
    expect("undecodable protobuf message fails", r.status === "FAILED" && has(r, /channel 0 \(\/pose\), log_time 1700000000100000000, does not decode as tether\.selftest\.Pose/), r,
           "expected the /pose message at 100 ms named");
    expect("undecodable JSON message fails", has(r, /\(\/status\), log_time 1700000000203000000, does not decode/), r, "expected the /status message at 203 ms named");
    expect("nothing else is wrong with it", r.errors.length === 2, r, `expected exactly 2 errors, got ${r.errors.length}`);
  }

  // Wrong Statistics counts, with a valid summary CRC.
  {
    const path = await variant("stats-message-count", good, (buf, l) => {
      buf.writeBigUInt64LE(buf.readBigUInt64LE(l.statistics.content) + 1n, l.statistics.content);
      return fixCrcs(buf);
    });
    const r = await checkMcapFile(path);
    expect("wrong Statistics message_count fails", r.status === "FAILED" && has(r, /^Statistics: message_count 601, found 600$/) && r.errors.length === 1, r,
           "expected exactly 'Statistics: message_count 601, found 600'");
  }
  {
    const path = await variant("stats-channel-count", good, (buf, l) => {
      // message_count u64, schema_count u16, channel/attachment/metadata/chunk counts u32 ×4,
      // start/end time u64 ×2, then the map's byte length u32 and its first (u16 id, u64 count).
      const entry = l.statistics.content + 8 + 2 + 16 + 16 + 4;
      buf.writeBigUInt64LE(buf.readBigUInt64LE(entry + 2) - 1n, entry + 2);
      return fixCrcs(buf);
    });
    const r = await checkMcapFile(path);
    expect("wrong Statistics channel_message_counts fails", r.status === "FAILED" && has(r, /Statistics: channel_message_counts\[0 \/pose\] 449, found 450/), r,
           "expected the /pose count named");
  }

  // A Message Index entry pointing at the wrong offset.
  {
    const path = await variant("message-index-offset", good, (buf, l) => {
      const mi = l.messageIndexes.find((r) => buf.readUInt32LE(r.content + 2) > 0); // u16 channel, u32 byte length, entries
      const entry = mi.content + 2 + 4;
      buf.writeBigUInt64LE(buf.readBigUInt64LE(entry + 8) + 1n, entry + 8);
      return fixCrcs(buf);
    });
    const r = await checkMcapFile(path);
    expect("wrong Message Index offset fails", r.status === "FAILED" && has(r, /Message Index \(offset \d+\) of channel \d+ lists/) && has(r, /^indexed read/), r,
           "expected the message index mismatch and the indexed read's error");
  }

  // A summary whose CRC is wrong.
  {
    const path = await variant("summary-crc", good, (buf, l) => {
      buf[l.statistics.content] ^= 1;
    });
    const r = await checkMcapFile(path);
    expect("wrong summary CRC fails", r.status === "FAILED" && has(r, /^summary \(offset \d+\): Incorrect summary CRC/), r, "expected the summary CRC error");
  }
  {
    const path = await variant("data-crc", good, (buf, l) => {
      buf.writeUInt32LE(buf.readUInt32LE(l.dataEnd + 9) ^ 1, l.dataEnd + 9);
    });
    const r = await checkMcapFile(path);
    expect("wrong data section CRC fails", r.status === "FAILED" && has(r, /^Data End \(offset \d+\): data section CRC/), r, "expected the data section CRC error");
  }
  {
    const r = await checkMcapFile(good, { expectTopics: ["/pose", "/missing"] });
    expect("missing expected topic fails", r.status === "FAILED" && has(r, /expected topic \/missing/) && r.errors.length === 1, r, "expected one error naming /missing");
  }

  // The CLI and its exit codes.
  const cli = async (...args) => {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [join(here, "check-mcap.mjs"), ...args]);
      return { code: 0, stdout };
    } catch (e) {
      return { code: e.code, stdout: e.stdout };
    }
  };
  {
    const a = await cli("--expect-topic", "/pose", good, plain);
    expect("CLI: good files exit 0", a.code === 0 && /good\.mcap: ok  600 messages  channels \{\/pose→450, \/status→150\}/.test(a.stdout), undefined, `exit ${a.code}: ${a.stdout}`);
    const b = await cli("--json", good, join(dir, "stats-message-count.mcap"));
    let json;
    try {
      json = JSON.parse(b.stdout);
    } catch {}
    expect("CLI: --json, one bad file exits 1", b.code === 1 && json?.ok === false && json.files[0].ok && !json.files[1].ok, undefined, `exit ${b.code}: ${b.stdout.slice(0, 400)}`);
    const c = await cli(cut);
    const d = await cli("--allow-truncated", cut);
    expect("CLI: truncated exits 1, 0 with --allow-truncated", c.code === 1 && d.code === 0 && /truncated \(accepted\)/.test(d.stdout), undefined, `exit ${c.code} / ${d.code}`);
    const e = await cli("--bogus");
    expect("CLI: usage error exits 2", e.code === 2, undefined, `exit ${e.code}`);
  }
} catch (e) {
  failed++;
  console.log(`FAIL selftest crashed: ${e.stack ?? e}`);
} finally {
  if (keep) console.log(`files kept in ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
