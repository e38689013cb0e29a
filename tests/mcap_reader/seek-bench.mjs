#!/usr/bin/env node
// "Time to open and seek a 10-minute file", measured with an independent reader (@mcap/core's
// McapIndexedReader, the way Foxglove opens a file) on an indexed MCAP file:
//   open       open the file and read its summary (Header, Footer, summary section)
//   seek 50 %  the first message at or after the middle of the time range
//   seek 90 %  the first message at or after 90 % of the time range
//   read all   every message, through the Chunk Index and message indexes
// Each seek starts a fresh readMessages() and stops after one message, so it costs what a
// player's jump costs: find the chunks by the Chunk Index, read their message indexes,
// decompress one chunk. Times in ms (performance.now()); the decompressors' one-time wasm load
// is its own row, not part of "open".
//
//   node tests/mcap_reader/seek-bench.mjs [--json] FILE

import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import { loadDecompressHandlers } from "@mcap/support";

const args = process.argv.slice(2);
const json = args.includes("--json");
const file = args.find((a) => !a.startsWith("--"));
if (!file) {
  console.error("usage: seek-bench.mjs [--json] FILE");
  process.exit(2);
}

const rows = [];
/** Runs fn, adds a row; fn returns [value, detail]. */
const time = async (step, fn) => {
  const t = performance.now();
  const [value, detail] = await fn();
  rows.push({ step, ms: performance.now() - t, detail });
  return value;
};

const decompressHandlers = await time("load decompressors", async () => [await loadDecompressHandlers(), "wasm zstd/lz4/bz2, once per process"]);

let fh;
const reader = await time("open (summary)", async () => {
  fh = await open(file, "r");
  const size = (await fh.stat()).size;
  const readable = {
    size: async () => BigInt(size),
    read: async (offset, length) => {
      const buf = new Uint8Array(Number(length));
      const { bytesRead } = await fh.read(buf, 0, buf.byteLength, Number(offset));
      if (bytesRead !== buf.byteLength) throw new Error(`short read at ${offset}`);
      return buf;
    },
  };
  const r = await McapIndexedReader.Initialize({ readable, decompressHandlers });
  return [r, `${(size / 1e6).toFixed(1)} MB, ${r.chunkIndexes.length} chunks, ${r.channelsById.size} channels`];
});

let start, end;
for (const c of reader.chunkIndexes) {
  if (start === undefined || c.messageStartTime < start) start = c.messageStartTime;
  if (end === undefined || c.messageEndTime > end) end = c.messageEndTime;
}
if (start === undefined) {
  console.error(`${file}: no chunks, nothing to seek`);
  process.exit(1);
}
const span = end - start;

for (const pct of [50n, 90n]) {
  const at = start + (span * pct) / 100n;
  await time(`seek ${pct} %`, async () => {
    for await (const m of reader.readMessages({ startTime: at })) {
      return [m, `first message at ${(Number(m.logTime - start) / 1e9).toFixed(3)} s (channel ${m.channelId})`];
    }
    return [undefined, "no message"];
  });
}
await time("read all", async () => {
  let n = 0, bytes = 0;
  for await (const m of reader.readMessages()) {
    n++;
    bytes += m.data.byteLength;
  }
  return [n, `${n} messages, ${(bytes / 1e6).toFixed(1)} MB of message data`];
});
await fh.close();

const duration = Number(span) / 1e9;
if (json) {
  console.log(JSON.stringify({ file, durationSeconds: duration, node: process.version, rows }, null, 2));
} else {
  console.log(`${file}: ${duration.toFixed(1)} s of messages (node ${process.version})`);
  console.log("| step | ms | |\n| --- | ---: | --- |");
  for (const r of rows) console.log(`| ${r.step} | ${r.ms.toFixed(1)} | ${r.detail} |`);
}
