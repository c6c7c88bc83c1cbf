// The two snapshot decoders agree: every input of tests/data/decode-diff.txt
// (recipes over the golden files, the corpus's snapshots and bases spelled out
// in hex; the format: tests/snapshot_diff.rs, which checks the Rust decoder
// gives each the verdict recorded there) gets the same verdict from
// TtlCache.restore: the same message, byte offset included, as a plain Error;
// or, where Rust accepts, a cache whose snapshot() writes the same body back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { TtlCache } from "lapse";

const data = (name) => new URL(`../data/${name}`, import.meta.url);
const PREFIX = "bytes: not a valid snapshot: ";

const unhex = (s) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

function crc32(b, n) {
  let c = 0xffffffff;
  for (let i = 0; i < n; i++) {
    c ^= b[i];
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** Gives `b` its true length and CRC-32, if it has room for them. */
function seal(b) {
  const n = b.length;
  if (n < 20) return;
  const dv = new DataView(b.buffer, b.byteOffset, n);
  dv.setUint32(8, n, true);
  dv.setUint32(12, 0, true);
  dv.setUint32(n - 4, crc32(b, n - 4), true);
}

/** A line's edits (see tests/snapshot_diff.rs) applied to a copy of `base`. */
function apply(base, sealed, edits) {
  let b = [...base];
  for (const e of edits.split(" ")) {
    if (e === "-") continue;
    const [at, arg] = e.slice(1).split(":");
    const i = Number(at);
    switch (e[0]) {
      case "x":
        b[i] ^= Number(arg);
        break;
      case "w":
        unhex(arg).forEach((x, k) => {
          if (i + k < b.length) b[i + k] = x;
        });
        break;
      case "i":
        b.splice(i, 0, ...unhex(arg));
        break;
      case "d":
        b.splice(i, Number(arg));
        break;
      case "t":
        b = b.slice(0, i);
        break;
      default:
        throw new Error(`unknown edit ${e}`);
    }
  }
  const out = Uint8Array.from(b);
  if (sealed) seal(out);
  return out;
}

const bases = [new Uint8Array(readFileSync(data("golden-v1.bin"))), new Uint8Array(readFileSync(data("golden-v2.bin")))];
for (const line of readFileSync(data("corpus.jsonl"), "utf8").split("\n")) {
  if (line === "") continue;
  const op = JSON.parse(line);
  if (op.op === "snapshot") bases.push(unhex(op.r));
}

test("the JS decoder gives every input the Rust decoder's verdict", () => {
  const lines = readFileSync(data("decode-diff.txt"), "utf8").split("\n");
  const wrong = [];
  let n = 0;
  let ok = 0;
  lines.forEach((line, i) => {
    if (line === "" || line.startsWith("#")) return;
    const cols = line.split("\t");
    let input;
    if (cols.length === 2 && cols[0].startsWith("+")) {
      input = unhex(cols[0].slice(1));
      bases.push(input);
    } else {
      assert.equal(cols.length, 4, `decode-diff.txt:${i + 1}: bad line`);
      input = apply(bases[Number(cols[0])], cols[1] === "s", cols[2]);
    }
    const want = cols.at(-1);
    n++;
    let got;
    try {
      // sizeOf: restore never calls it, but a snapshot with maxBytes needs
      // one. A `now` before any snapshot's time leaves the clock at the
      // snapshot's (manual, so that it stays there).
      const r = TtlCache.restore(input, { sizeOf: () => 0, now: -Number.MAX_VALUE });
      got = "ok";
      ok++;
      // What the JS decoder built is what the bytes hold: written again,
      // it is the same body (the header says version 2 and a manual clock).
      const again = r.snapshot();
      r.free();
      if (hex(again.subarray(8, -4)) !== hex(input.subarray(8, -4))) {
        got = `restored and written again: ${hex(again)}`;
      }
    } catch (e) {
      if (e.constructor !== Error || !e.message.startsWith(PREFIX)) throw e;
      got = e.message.slice(PREFIX.length);
    }
    if (got !== want) wrong.push(`decode-diff.txt:${i + 1}: Rust says ${JSON.stringify(want)}, JS ${JSON.stringify(got)} (input ${hex(input)})`);
  });
  assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} of ${n} verdicts differ`);
  assert.ok(n >= 3000 && ok >= 300, `only ${n} inputs, ${ok} of them valid`);
});
