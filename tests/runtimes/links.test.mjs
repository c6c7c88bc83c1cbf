// Every link in the shipped package's Markdown resolves inside the package:
// relative links name a shipped file (never a repo file left behind), and a
// #fragment names a heading of its target. Absolute http(s) links are left
// alone (they do not depend on the package's layout).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, normalize, relative, sep } from "node:path";

const require = createRequire(import.meta.url);
const root = dirname(require.resolve("lapse/package.json"));
const docs = readdirSync(root).filter((f) => f.endsWith(".md"));

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown) {
  const seen = new Map();
  const out = new Set();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "");
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** [text](target) and [text]: target links, outside code. */
export function links(markdown) {
  const found = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, "");
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push(m[1]);
    const def = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(prose);
    if (def) found.push(def[1]);
  }
  return found;
}

test("links: the package ships its docs", () => {
  assert.ok(docs.includes("README.md"));
});

for (const doc of docs) {
  test(`links: every link in ${doc} resolves inside the package`, () => {
    const text = readFileSync(join(root, doc), "utf8");
    const bad = [];
    for (const link of links(text)) {
      if (/^(https?:|mailto:)/i.test(link)) continue;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
        bad.push(`${link}: scheme not allowed`);
        continue;
      }
      const [path, fragment] = link.split("#");
      const target = path ? normalize(join(root, decodeURI(path))) : join(root, doc);
      const rel = relative(root, target);
      if (rel.startsWith("..") || rel.split(sep)[0] === "node_modules") {
        bad.push(`${link}: points outside the package`);
        continue;
      }
      if (!existsSync(target)) {
        bad.push(`${link}: ${rel} is not in the package`);
        continue;
      }
      if (fragment !== undefined && target.endsWith(".md") && statSync(target).isFile()) {
        if (!anchors(readFileSync(target, "utf8")).has(decodeURIComponent(fragment))) {
          bad.push(`${link}: no heading #${fragment} in ${rel}`);
        }
      }
    }
    assert.deepEqual(bad, []);
  });
}

test("links: the checker itself finds broken links and anchors", () => {
  const md = "# Top Title\n## A `code` heading\n[a](./API.md) [b](../src/x.rs) [c](#top-title) `[d](nope.md)`\n```\n[e](gone.md)\n```\n[f]: ./SNAPSHOT.md\n";
  assert.deepEqual(links(md), ["./API.md", "../src/x.rs", "#top-title", "./SNAPSHOT.md"]);
  assert.deepEqual([...anchors(md)], ["top-title", "a-code-heading"]);
});
