#!/usr/bin/env node
// An independent check of MCAP recordings (https://mcap.dev/spec): the files tether's C++
// writer (common/mcap) makes are read here with Foxglove's reader (@mcap/core), decompressed
// with @mcap/support's wasm decompressors and their messages decoded with protobufjs from the
// schema stored in the file, so a bug shared by our writer and our reader cannot hide.
//
//   node tests/mcap_reader/check-mcap.mjs [--json] [--allow-truncated]
//        [--expect-topic TOPIC ...] FILE...
//
// Per file:
// - the magic at both ends and the Footer; a file without them (a writer killed mid-file) is
//   `truncated`: checked up to its last complete record, accepted only with --allow-truncated;
// - McapIndexedReader opens the summary (Header, Footer, summary CRC); the data section's CRC
//   is computed here over bytes [0, Data End);
// - one linear pass with McapStreamReader (validateCrcs: true): every chunk's CRC, every
//   record's framing; every message decoded with its channel's schema (protobuf: the schema
//   data is a google.protobuf.FileDescriptorSet, the schema name the message type; json:
//   JSON.parse must succeed);
// - each chunk's Message Index records against the messages the chunk really holds (channel,
//   log time, offset), the Chunk Index records against the chunks, the Statistics record
//   against the counts found, the summary's Schema/Channel records against the data section's;
// - McapIndexedReader.readMessages() reads every message through the indexes: its counts per
//   channel must equal the linear pass's.
// Strict where the spec allows "not written" (a CRC of 0, no Statistics, no Chunk Index, a
// file with no summary, messages outside chunks): tether's writer writes all of them, so their
// absence is a bug here, not a style.
//
// Output: one line per file (path, ok / FAILED / truncated, messages, channels topic→count,
// schema names, time range), then its notes and errors (naming the offset, record and channel)
// on indented lines; --json prints {ok, files: [...]} instead (times in ns, as strings).
// Exit code: 0 if every file is ok, 1 if any is not, 2 on a usage error.
// `checkMcapFile()` is exported for selftest.mjs.

import { realpathSync } from "node:fs";
import { open } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { McapIndexedReader, McapStreamReader, MCAP_MAGIC } from "@mcap/core";
import { loadDecompressHandlers } from "@mcap/support";
// @mcap/core's own CRC-32 (a dependency it always installs): the data section's CRC is not
// checked by McapIndexedReader, only read, so it is computed here.
import { crc32, crc32Init, crc32Update, crc32Final } from "@foxglove/crc";
import protobuf from "protobufjs";
// CommonJS module: adds Root.fromDescriptor and exports the descriptor.proto types.
import descriptor from "protobufjs/ext/descriptor/index.js";

const OP = { MESSAGE: 0x05, FOOTER: 0x02 };
const FOOTER_BYTES = 1 + 8 + 8 + 8 + 4; // opcode, length, summary_start, summary_offset_start, crc
const READ_BLOCK = 4 << 20;
const MAX_ERRORS_PER_CHANNEL = 3; // decode failures listed per channel; the rest are counted
const MAX_ERRORS = 50;

let handlersPromise;
/** zstd/lz4/bz2 handlers, memoised on the input buffer: the checker decompresses a chunk to
 * walk its records itself, then the stream reader asks for the same buffer again. */
async function decompressHandlers() {
  handlersPromise ??= loadDecompressHandlers().then((base) => {
    let lastIn, lastOut;
    const out = {};
    for (const [name, fn] of Object.entries(base)) {
      out[name] = (buf, size) => {
        if (buf !== lastIn) {
          lastOut = fn(buf, size);
          lastIn = buf;
        }
        return lastOut;
      };
    }
    return out;
  });
  return handlersPromise;
}

function magicAt(bytes, at) {
  return MCAP_MAGIC.every((b, i) => bytes[at + i] === b);
}

/** An IReadable over an open file, for McapIndexedReader. */
function fileReadable(fh, size) {
  return {
    size: async () => BigInt(size),
    read: async (offset, length) => readExactly(fh, Number(offset), Number(length)),
  };
}

async function readExactly(fh, offset, length) {
  const buf = new Uint8Array(length);
  for (let done = 0; done < length; ) {
    const { bytesRead } = await fh.read(buf, done, length - done, offset + done);
    if (bytesRead === 0) throw new Error(`read past the end of the file at offset ${offset + done}`);
    done += bytesRead;
  }
  return buf;
}

/** The records in a chunk's decompressed data, walked here independently of @mcap/core: each
 * message's channel, log time and offset in the chunk, and how many records there are. */
function walkChunk(data) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const messages = [];
  let records = 0;
  for (let p = 0; p < data.byteLength; records++) {
    if (p + 9 > data.byteLength) throw new Error(`record at chunk offset ${p} has a cut header`);
    const op = view.getUint8(p);
    const len = view.getBigUint64(p + 1, true);
    if (BigInt(p + 9) + len > BigInt(data.byteLength)) {
      throw new Error(`record (opcode 0x${op.toString(16)}) at chunk offset ${p} overruns the chunk`);
    }
    if (op === OP.MESSAGE) {
      if (len < 22n) throw new Error(`message at chunk offset ${p} is too short (${len} bytes)`);
      messages.push({ channelId: view.getUint16(p + 9, true), logTime: view.getBigUint64(p + 15, true), offset: BigInt(p) });
    }
    p += 9 + Number(len);
  }
  return { messages, records };
}

/** A decoder for a channel: a function (data) => void that throws if the data does not decode. */
function makeDecoder(channel, schema) {
  const enc = channel.messageEncoding;
  if (enc === "protobuf") {
    if (!schema) throw new Error(`protobuf channel has no schema (schema id ${channel.schemaId})`);
    if (schema.encoding !== "protobuf") throw new Error(`protobuf channel's schema ${schema.name} has encoding "${schema.encoding}"`);
    let root;
    try {
      root = protobuf.Root.fromDescriptor(descriptor.FileDescriptorSet.decode(schema.data));
      root.resolveAll(); // a type the set refers to but does not hold fails here, not per message
    } catch (e) {
      throw new Error(`schema ${schema.id} (${schema.name}) is not a usable FileDescriptorSet: ${e.message}`);
    }
    let type;
    try {
      type = root.lookupType(schema.name);
    } catch (e) {
      throw new Error(`schema ${schema.id}: message type ${schema.name} is not in its FileDescriptorSet`);
    }
    return (data) => {
      type.decode(data);
    };
  }
  if (enc === "json") {
    if (schema && schema.encoding !== "jsonschema") throw new Error(`json channel's schema ${schema.name} has encoding "${schema.encoding}"`);
    const utf8 = new TextDecoder("utf-8", { fatal: true });
    return (data) => {
      JSON.parse(utf8.decode(data));
    };
  }
  throw new Error(`message encoding "${enc}" cannot be decoded by this checker`);
}

function fmtTime(ns) {
  const s = ns / 1_000_000_000n;
  return `${s}.${String(ns % 1_000_000_000n).padStart(9, "0")}`;
}

/**
 * Checks one MCAP file. Returns { path, status: "ok" | "truncated" | "FAILED", ok, truncated,
 * indexed, messages, channels: [{id, topic, schema, count}], schemas: [names], library,
 * timeRange: {start, end} (ns, bigint) | null, errors: [string], notes: [string] }.
 */
export async function checkMcapFile(path, { allowTruncated = false, expectTopics = [] } = {}) {
  const errors = [];
  const notes = [];
  const err = (msg) => {
    if (errors.length < MAX_ERRORS) errors.push(msg);
    else if (errors.length === MAX_ERRORS) errors.push("… more errors not listed");
  };
  const result = { path, status: "FAILED", ok: false, truncated: false, indexed: false, messages: 0, channels: [], schemas: [], library: undefined, timeRange: null, errors, notes };

  let fh;
  try {
    fh = await open(path, "r");
  } catch (e) {
    err(`cannot open: ${e.message}`);
    return result;
  }
  try {
    await checkOpen(fh, result, err, { allowTruncated, expectTopics });
  } catch (e) {
    err(`unexpected: ${e.stack ?? e}`);
  } finally {
    await fh.close();
  }
  const failed = errors.length > 0; // errors other than the truncation itself
  if (result.truncated && !allowTruncated) {
    err("truncated (no footer/summary): the writer did not close the file (--allow-truncated accepts it)");
  }
  result.ok = errors.length === 0;
  result.status = failed ? "FAILED" : result.truncated ? "truncated" : "ok";
  return result;
}

async function checkOpen(fh, result, err, { expectTopics }) {
  const size = (await fh.stat()).size;
  const magicLen = MCAP_MAGIC.length;

  // 1. The magic at both ends and the Footer.
  const head = await readExactly(fh, 0, Math.min(size, magicLen));
  if (size < magicLen || !magicAt(head, 0)) {
    err(`offset 0: no MCAP magic (not an MCAP file)`);
    return;
  }
  let footer; // { summaryStart, summaryOffsetStart, summaryCrc }
  const tailLen = FOOTER_BYTES + magicLen;
  if (size >= magicLen + tailLen) {
    const tail = await readExactly(fh, size - tailLen, tailLen);
    const v = new DataView(tail.buffer);
    if (magicAt(tail, FOOTER_BYTES)) {
      if (v.getUint8(0) !== OP.FOOTER || v.getBigUint64(1, true) !== 20n) {
        err(`offset ${size - tailLen}: trailing magic present but no Footer record before it`);
        return;
      }
      footer = { summaryStart: v.getBigUint64(9, true), summaryOffsetStart: v.getBigUint64(17, true), summaryCrc: v.getUint32(25, true) };
    }
  }
  if (!footer) result.truncated = true;

  // 2. The summary, through McapIndexedReader (which checks the summary CRC).
  const handlers = await decompressHandlers();
  let indexed;
  if (footer && footer.summaryStart === 0n) {
    err("footer: summary_start is 0: the file has no summary (not indexed, cannot seek)");
  } else if (footer) {
    if (footer.summaryCrc === 0) err("footer: summary CRC not written (0)");
    try {
      indexed = await McapIndexedReader.Initialize({ readable: fileReadable(fh, size), decompressHandlers: handlers });
      result.indexed = true;
    } catch (e) {
      err(`summary (offset ${footer.summaryStart}): ${e.message}`);
    }
  }

  // 3. The linear pass.
  const found = await linearPass(fh, size, handlers, result, err, !!footer);
  result.library = found.header?.library;

  // 4. The data section's CRC: bytes [0, Data End).
  if (found.dataEnd) {
    if (found.dataEnd.crc === 0) {
      err(`Data End (offset ${found.dataEnd.offset}): data section CRC not written (0)`);
    } else {
      let crc = crc32Init();
      for (let at = 0; at < found.dataEnd.offset; at += READ_BLOCK) {
        crc = crc32Update(crc, await readExactly(fh, at, Math.min(READ_BLOCK, found.dataEnd.offset - at)));
      }
      crc = crc32Final(crc);
      if (crc !== found.dataEnd.crc) {
        err(`Data End (offset ${found.dataEnd.offset}): data section CRC is ${crc}, the record says ${found.dataEnd.crc}`);
      }
    }
    if (indexed && BigInt(found.dataEnd.offset) !== indexed.dataEndOffset) {
      err(`Data End found at offset ${found.dataEnd.offset}, footer's summary_start puts it at ${indexed.dataEndOffset}`);
    }
  } else if (footer && !found.stopped) {
    err("no Data End record found");
  }

  // 5. Chunks against their message indexes (also in truncated files).
  checkChunks(found, err);

  // 6. The summary against what the linear pass found.
  if (indexed) {
    if (found.stopped) {
      result.notes.push("summary not compared: the linear pass stopped at an error");
    } else {
      checkSummary(indexed, found, err);
      await checkIndexedRead(indexed, found, err);
    }
  }
  if (found.outsideChunks > 0) {
    err(`${found.outsideChunks} messages outside chunks (not reachable through the Chunk Index)`);
  }

  // The report.
  result.messages = found.messageCount;
  result.timeRange = found.messageCount ? { start: found.minTime, end: found.maxTime } : null;
  for (const [id, ch] of [...found.channels].sort((a, b) => a[0] - b[0])) {
    result.channels.push({ id, topic: ch.topic, schema: found.schemas.get(ch.schemaId)?.name ?? "", count: found.countByChannel.get(id) ?? 0 });
  }
  result.schemas = [...new Set([...found.schemas.values()].map((s) => s.name))];
  for (const topic of expectTopics) {
    const n = result.channels.filter((c) => c.topic === topic).reduce((a, c) => a + c.count, 0);
    if (n === 0) err(`expected topic ${topic}: no messages`);
  }
}

/** Feeds the whole file to McapStreamReader and collects what it holds. */
async function linearPass(fh, size, handlers, result, err, complete) {
  const found = {
    header: undefined,
    schemas: new Map(), // data section's, by id
    channels: new Map(),
    chunks: [], // { offset, end, record, messages: [{channelId, logTime, offset}], indexes: Map, miStart, miEnd, miClosed }
    countByChannel: new Map(),
    messageCount: 0,
    minTime: undefined,
    maxTime: undefined,
    attachments: 0,
    metadata: 0,
    outsideChunks: 0,
    dataEnd: undefined, // { offset, crc }
    stopped: false, // an error ended the pass early
  };
  const decoders = new Map(); // channel id → decode function | Error
  const decodeFailures = new Map(); // channel id → count

  const reader = new McapStreamReader({ includeChunks: true, validateCrcs: true, decompressHandlers: handlers });
  let appended = 0;
  let chunk; // the chunk whose records the reader is yielding
  let innerLeft = 0; // records of `chunk` still to come
  let chunkJustYielded = false;
  let lastChunk; // the last chunk seen, whose Message Index records follow it
  let inSummary = false;
  let msgInChunk = 0;
  const block = new Uint8Array(READ_BLOCK);

  outer: while (appended < size) {
    const { bytesRead } = await fh.read(block, 0, Math.min(READ_BLOCK, size - appended), appended);
    if (bytesRead === 0) break;
    reader.append(block.subarray(0, bytesRead));
    appended += bytesRead;
    for (;;) {
      const pos = appended - reader.bytesRemaining();
      let rec;
      try {
        rec = reader.nextRecord();
      } catch (e) {
        const where = chunk && (innerLeft > 0 || chunkJustYielded) ? `chunk at offset ${chunk.offset}` : `record at offset ${pos}`;
        err(`${where}: ${e.message}`);
        found.stopped = true;
        break outer;
      }
      if (!rec) break;
      const end = appended - reader.bytesRemaining();
      chunkJustYielded = false;

      if (chunk && innerLeft > 0) {
        // A record inside `chunk`.
        innerLeft--;
        if (rec.type === "Message") {
          const where = chunk.messages[msgInChunk++];
          onMessage(rec, `chunk at offset ${chunk.offset} + ${where?.offset ?? "?"}`);
        } else {
          onDataRecord(rec);
        }
        continue;
      }
      chunk = undefined;
      const offset = rec.type === "Header" ? MCAP_MAGIC.length : pos;
      if (lastChunk && !lastChunk.miClosed && rec.type !== "MessageIndex") {
        lastChunk.miClosed = true;
      }
      switch (rec.type) {
        case "Header":
          found.header = rec;
          break;
        case "Chunk": {
          const c = { offset, end, record: rec, messages: [], indexes: new Map(), miStart: undefined, miEnd: undefined, miClosed: false };
          found.chunks.push(c);
          lastChunk = c;
          if (rec.uncompressedCrc === 0) err(`chunk at offset ${offset}: uncompressed CRC not written (0)`);
          let data = rec.records;
          try {
            if (rec.compression !== "" && data.byteLength > 0) {
              const fn = handlers[rec.compression];
              if (!fn) throw new Error(`unsupported compression "${rec.compression}"`);
              data = fn(data, rec.uncompressedSize);
            }
            if (BigInt(data.byteLength) !== rec.uncompressedSize) {
              throw new Error(`decompressed to ${data.byteLength} bytes, the record says ${rec.uncompressedSize}`);
            }
            // The CRC first (McapStreamReader checks it again next), so a damaged chunk is
            // reported as such and not as whatever the walk below trips over.
            if (rec.uncompressedCrc !== 0 && crc32(data) !== rec.uncompressedCrc) {
              throw new Error(`Incorrect chunk CRC ${crc32(data)} (expected ${rec.uncompressedCrc})`);
            }
            const walked = walkChunk(data);
            c.messages = walked.messages;
            innerLeft = walked.records;
          } catch (e) {
            err(`chunk at offset ${offset}: ${e.message}`);
            found.stopped = true;
            break outer;
          }
          chunk = c;
          chunkJustYielded = true;
          msgInChunk = 0;
          break;
        }
        case "MessageIndex":
          if (!lastChunk || lastChunk.miClosed) {
            err(`Message Index at offset ${offset} (channel ${rec.channelId}) does not follow a chunk`);
            break;
          }
          if (lastChunk.indexes.has(rec.channelId)) err(`chunk at offset ${lastChunk.offset}: two Message Index records for channel ${rec.channelId}`);
          lastChunk.indexes.set(rec.channelId, { offset, records: rec.records });
          lastChunk.miStart ??= offset;
          lastChunk.miEnd = end;
          break;
        case "DataEnd":
          found.dataEnd = { offset, crc: rec.dataSectionCrc };
          inSummary = true;
          break;
        case "Message":
          if (!inSummary) {
            found.outsideChunks++;
            onMessage(rec, `record at offset ${offset}`);
          }
          break;
        default:
          if (!inSummary) onDataRecord(rec);
      }
    }
  }
  if (!found.stopped && !reader.done()) {
    const last = appended - reader.bytesRemaining();
    if (complete) {
      err(`offset ${last}: the records end ${reader.bytesRemaining()} bytes before the footer (a cut or overlong record)`);
    } else {
      result.notes.push(`truncated: ${reader.bytesRemaining()} bytes after the last complete record (ends at offset ${last})`);
    }
  }
  for (const [id, n] of decodeFailures) {
    if (n > MAX_ERRORS_PER_CHANNEL) err(`channel ${id} (${found.channels.get(id)?.topic}): ${n} messages in all do not decode`);
  }
  return found;

  function onDataRecord(rec) {
    switch (rec.type) {
      case "Schema":
        found.schemas.set(rec.id, rec);
        break;
      case "Channel":
        found.channels.set(rec.id, rec);
        break;
      case "Attachment":
        found.attachments++;
        break;
      case "Metadata":
        found.metadata++;
        break;
    }
  }

  function onMessage(rec, where) {
    const id = rec.channelId;
    found.messageCount++;
    found.countByChannel.set(id, (found.countByChannel.get(id) ?? 0) + 1);
    if (found.minTime === undefined || rec.logTime < found.minTime) found.minTime = rec.logTime;
    if (found.maxTime === undefined || rec.logTime > found.maxTime) found.maxTime = rec.logTime;
    let decode = decoders.get(id);
    const channel = found.channels.get(id);
    if (decode === undefined) {
      try {
        decode = makeDecoder(channel, found.schemas.get(channel.schemaId));
      } catch (e) {
        decode = e;
        err(`channel ${id} (${channel.topic}): ${e.message}`);
      }
      decoders.set(id, decode);
    }
    if (decode instanceof Error) return;
    try {
      decode(rec.data);
    } catch (e) {
      const n = (decodeFailures.get(id) ?? 0) + 1;
      decodeFailures.set(id, n);
      if (n <= MAX_ERRORS_PER_CHANNEL) {
        const schema = found.schemas.get(channel.schemaId);
        err(`${where}: message on channel ${id} (${channel.topic}), log_time ${rec.logTime}, does not decode as ${schema?.name ?? channel.messageEncoding}: ${e.message}`);
      }
    }
  }
}

/** Each chunk's messages against its header's times and its Message Index records. */
function checkChunks(found, err) {
  for (const c of found.chunks) {
    const at = `chunk at offset ${c.offset}`;
    if (c.messages.length > 0) {
      let lo = c.messages[0].logTime, hi = lo;
      for (const m of c.messages) {
        if (m.logTime < lo) lo = m.logTime;
        if (m.logTime > hi) hi = m.logTime;
      }
      if (lo !== c.record.messageStartTime || hi !== c.record.messageEndTime) {
        err(`${at}: header says messages ${c.record.messageStartTime}..${c.record.messageEndTime}, they are ${lo}..${hi}`);
      }
    }
    if (!c.miClosed) continue; // a truncated file's last chunk: its indexes may be cut off
    const actual = new Map(); // channel → "logTime@offset" list
    for (const m of c.messages) {
      if (!actual.has(m.channelId)) actual.set(m.channelId, []);
      actual.get(m.channelId).push(`${m.logTime}@${m.offset}`);
    }
    for (const [ch, list] of actual) {
      const mi = c.indexes.get(ch);
      if (!mi) {
        err(`${at}: channel ${ch} has ${list.length} messages but no Message Index record`);
        continue;
      }
      const indexed = mi.records.map(([t, o]) => `${t}@${o}`);
      const a = [...list].sort(), b = [...indexed].sort();
      if (a.length !== b.length || a.some((x, i) => x !== b[i])) {
        const missing = a.filter((x) => !b.includes(x)).slice(0, 3);
        const extra = b.filter((x) => !a.includes(x)).slice(0, 3);
        err(`${at}: Message Index (offset ${mi.offset}) of channel ${ch} lists ${b.length} messages, the chunk holds ${a.length}` +
            (missing.length ? `; not indexed: ${missing.join(", ")}` : "") + (extra.length ? `; indexed but absent: ${extra.join(", ")}` : "") + " (log_time@offset)");
      }
    }
    for (const [ch, mi] of c.indexes) {
      if (!actual.has(ch) && mi.records.length > 0) {
        err(`${at}: Message Index (offset ${mi.offset}) lists ${mi.records.length} messages on channel ${ch}, which has none in the chunk`);
      }
    }
  }
}

/** The summary section against the data section. */
function checkSummary(indexed, found, err) {
  // Schemas and channels.
  for (const [id, s] of indexed.schemasById) {
    const d = found.schemas.get(id);
    if (!d) err(`summary: Schema ${id} (${s.name}) is not in the data section`);
    else if (d.name !== s.name || d.encoding !== s.encoding || Buffer.compare(Buffer.from(d.data), Buffer.from(s.data)) !== 0) {
      err(`summary: Schema ${id} (${s.name}) differs from the data section's`);
    }
  }
  for (const [id, c] of indexed.channelsById) {
    const d = found.channels.get(id);
    if (!d) err(`summary: Channel ${id} (${c.topic}) is not in the data section`);
    else if (d.topic !== c.topic || d.schemaId !== c.schemaId || d.messageEncoding !== c.messageEncoding) {
      err(`summary: Channel ${id} (${c.topic}) differs from the data section's`);
    }
  }
  for (const id of found.countByChannel.keys()) {
    if (!indexed.channelsById.has(id)) err(`summary: no Channel record for channel ${id} (${found.channels.get(id)?.topic}), which has messages`);
  }

  // Chunk Index records.
  const byOffset = new Map(found.chunks.map((c) => [c.offset, c]));
  const seen = new Set();
  for (const ci of indexed.chunkIndexes) {
    const off = Number(ci.chunkStartOffset);
    const at = `Chunk Index for offset ${off}`;
    const c = byOffset.get(off);
    if (!c) {
      err(`${at}: no chunk starts there`);
      continue;
    }
    if (seen.has(off)) err(`${at}: listed twice`);
    seen.add(off);
    const r = c.record;
    const diffs = [];
    const cmp = (name, want, got) => {
      if (want !== got) diffs.push(`${name} ${want} (chunk: ${got})`);
    };
    cmp("chunk_length", ci.chunkLength, BigInt(c.end - c.offset));
    cmp("compression", ci.compression, r.compression);
    cmp("compressed_size", ci.compressedSize, BigInt(r.records.byteLength));
    cmp("uncompressed_size", ci.uncompressedSize, r.uncompressedSize);
    cmp("message_start_time", ci.messageStartTime, r.messageStartTime);
    cmp("message_end_time", ci.messageEndTime, r.messageEndTime);
    cmp("message_index_length", ci.messageIndexLength, c.miStart === undefined ? 0n : BigInt(c.miEnd - c.miStart));
    if (diffs.length) err(`${at}: ${diffs.join(", ")}`);
    for (const [ch, mi] of c.indexes) {
      const o = ci.messageIndexOffsets.get(ch);
      if (o === undefined) err(`${at}: no message_index_offsets entry for channel ${ch}`);
      else if (Number(o) !== mi.offset) err(`${at}: message index of channel ${ch} at ${o}, found at ${mi.offset}`);
    }
    for (const ch of ci.messageIndexOffsets.keys()) {
      if (!c.indexes.has(ch)) err(`${at}: message_index_offsets names channel ${ch}, which has no Message Index after the chunk`);
    }
  }
  for (const c of found.chunks) {
    if (!seen.has(c.offset)) err(`chunk at offset ${c.offset}: no Chunk Index record`);
  }
  if (indexed.attachmentIndexes.length !== found.attachments) {
    err(`summary: ${indexed.attachmentIndexes.length} Attachment Index records, ${found.attachments} attachments found`);
  }
  if (indexed.metadataIndexes.length !== found.metadata) {
    err(`summary: ${indexed.metadataIndexes.length} Metadata Index records, ${found.metadata} metadata records found`);
  }

  // Statistics.
  const st = indexed.statistics;
  if (!st) {
    err("summary: no Statistics record");
    return;
  }
  const diffs = [];
  const cmp = (name, want, got) => {
    if (want !== got) diffs.push(`${name} ${want}, found ${got}`);
  };
  cmp("message_count", st.messageCount, BigInt(found.messageCount));
  cmp("schema_count", st.schemaCount, found.schemas.size);
  cmp("channel_count", st.channelCount, found.channels.size);
  cmp("chunk_count", st.chunkCount, found.chunks.length);
  cmp("attachment_count", st.attachmentCount, found.attachments);
  cmp("metadata_count", st.metadataCount, found.metadata);
  if (found.messageCount > 0) {
    cmp("message_start_time", st.messageStartTime, found.minTime);
    cmp("message_end_time", st.messageEndTime, found.maxTime);
  }
  const ids = new Set([...st.channelMessageCounts.keys(), ...found.countByChannel.keys()]);
  for (const id of [...ids].sort((a, b) => a - b)) {
    const topic = found.channels.get(id)?.topic ?? "?";
    cmp(`channel_message_counts[${id} ${topic}]`, st.channelMessageCounts.get(id) ?? 0n, BigInt(found.countByChannel.get(id) ?? 0));
  }
  if (diffs.length) err(`Statistics: ${diffs.join("; ")}`);
}

/** Every message through the indexes (McapIndexedReader.readMessages): the same counts. */
async function checkIndexedRead(indexed, found, err) {
  const counts = new Map();
  let prev = -1n;
  let n = 0;
  try {
    for await (const m of indexed.readMessages({ validateCrcs: true })) {
      counts.set(m.channelId, (counts.get(m.channelId) ?? 0) + 1);
      if (m.logTime < prev) throw new Error(`log_time ${m.logTime} after ${prev}: not in log-time order`);
      prev = m.logTime;
      n++;
    }
  } catch (e) {
    err(`indexed read (after ${n} messages): ${e.message}`);
    return;
  }
  const inChunks = found.messageCount - found.outsideChunks;
  if (n !== inChunks) err(`indexed read: ${n} messages through the indexes, ${inChunks} in chunks`);
  for (const id of new Set([...counts.keys(), ...found.countByChannel.keys()])) {
    const a = counts.get(id) ?? 0, b = found.countByChannel.get(id) ?? 0;
    if (a !== b && found.outsideChunks === 0) err(`indexed read: channel ${id}: ${a} messages through the indexes, ${b} in the file`);
  }
}

/** The one-line summary of a result (errors follow, one per indented line). */
export function formatResult(r) {
  const state = r.status === "truncated" ? (r.ok ? "truncated (accepted)" : "truncated") : r.status;
  const parts = [`${r.path}: ${state}`, `${r.messages} messages`];
  parts.push(`channels {${r.channels.map((c) => `${c.topic}→${c.count}`).join(", ")}}`);
  parts.push(`schemas [${r.schemas.join(", ")}]`);
  if (r.timeRange) {
    const dur = Number(r.timeRange.end - r.timeRange.start) / 1e9;
    parts.push(`time ${fmtTime(r.timeRange.start)}..${fmtTime(r.timeRange.end)} (${dur.toFixed(3)} s)`);
  }
  const lines = [parts.join("  ")];
  for (const n of r.notes) lines.push(`    note: ${n}`);
  for (const e of r.errors) lines.push(`    error: ${e}`);
  return lines.join("\n");
}

function toJson(r) {
  return JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v), 2);
}

async function main(argv) {
  const usage = "usage: check-mcap.mjs [--json] [--allow-truncated] [--expect-topic TOPIC ...] FILE...";
  const files = [];
  const expectTopics = [];
  let json = false, allowTruncated = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--json") json = true;
    else if (a === "--allow-truncated") allowTruncated = true;
    else if (a === "--expect-topic" && i + 1 < argv.length) expectTopics.push(argv[++i]);
    else if (a === "-h" || a === "--help") {
      console.log(usage);
      return 0;
    } else if (a.startsWith("--")) {
      console.error(`${usage}\nunknown option ${a}`);
      return 2;
    } else files.push(a);
  }
  if (files.length === 0) {
    console.error(usage);
    return 2;
  }
  const results = [];
  for (const f of files) {
    const r = await checkMcapFile(f, { allowTruncated, expectTopics });
    results.push(r);
    if (!json) console.log(formatResult(r));
  }
  if (json) console.log(toJson({ ok: results.every((r) => r.ok), files: results }));
  return results.every((r) => r.ok) ? 0 : 1;
}

// Run as a script (not imported by selftest.mjs). Node gives import.meta.url the file's real
// path, so argv[1] is compared after resolving symlinks.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
