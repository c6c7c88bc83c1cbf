// Coming from lru-cache: every option name lru-cache (the devDependency, v11)
// reads, passed to lapse, either is a lapse option too or fails with a
// TypeError that names it and says what to use instead ("use …") or that
// lapse has none ("none…"). The names are not typed out here: they are the
// properties lru-cache's own constructor and set() read from a Proxy, so a
// new lru-cache option without a hint fails this test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LRUCache } from "lru-cache";
import { TtlCache } from "lapse";

/** The string property names `fn` reads from the options object it is given. */
function optionNamesRead(fn) {
  const seen = new Set();
  const probe = new Proxy({}, {
    get(_, k) {
      if (typeof k === "string") seen.add(k);
      return undefined;
    },
  });
  fn(probe);
  return [...seen];
}

// An options object read by its constructor before it checks that one of
// max/maxSize/ttl is set, so the probe sees every name even though it throws.
const LRU_CTOR = optionNamesRead((o) => {
  try {
    new LRUCache(o);
  } catch {}
});
// Set twice on a size-tracking ttl cache: the second set (an update) reads
// the update-only options (noUpdateTTL) and the size ones.
const LRU_SET = optionNamesRead((o) => {
  const c = new LRUCache({ max: 10, ttl: 1000, maxSize: 100, sizeCalculation: () => 1, dispose() {} });
  c.set("a", 1, o);
  c.set("a", 2, o);
});

// Same name in both, accepted by lapse (the README states how each differs).
const SHARED_CTOR = ["ttl", "dispose"];
const SHARED_SET = ["ttl"];

// Where lapse has an equivalent, the hint must name it.
const EQUIVALENT_CTOR = {
  max: "maxEntries",
  maxSize: "maxBytes",
  sizeCalculation: "sizeOf",
  updateAgeOnGet: "idle",
  disposeAfter: "dispose",
  noUpdateTTL: "keepTtl",
  fetchMethod: "fetch(key, loader)",
  allowStaleOnFetchRejection: "grace",
  perf: "clock",
};
const EQUIVALENT_SET = { noUpdateTTL: "keepTtl" };

function rejection(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

function checkHints(names, shared, equivalents, call, arg) {
  const accepted = [];
  for (const name of names) {
    const e = rejection(() => call({ [name]: undefined }));
    if (e === null) {
      accepted.push(name);
      continue;
    }
    assert.ok(e instanceof TypeError, `${name}: ${e}`);
    assert.ok(e.message.startsWith(`${arg}: unknown option "${name}" (an lru-cache option): `), `${name}: ${e.message}`);
    const hint = e.message.slice(e.message.indexOf("): ") + 3);
    const want = equivalents[name];
    if (want !== undefined) assert.ok(hint.startsWith("use ") && hint.includes(want), `${name}: the hint names ${want}: ${e.message}`);
    else assert.match(hint, /^(use \S|none)/, `${name}: the hint says what to use, or that there is none: ${e.message}`);
  }
  assert.deepEqual(accepted.sort(), [...shared].sort(), "lapse accepts exactly the lru-cache names it shares");
}

test("lru-cache's option list was read from lru-cache itself", () => {
  // A probe that saw nothing would make the tests below vacuous.
  for (const n of ["max", "maxSize", "ttlAutopurge", "updateAgeOnGet", "allowStale", "fetchMethod", "perf"]) {
    assert.ok(LRU_CTOR.includes(n), `lru-cache's constructor reads ${n}`);
  }
  for (const n of ["ttl", "size", "sizeCalculation", "noDisposeOnSet", "noUpdateTTL", "start", "status"]) {
    assert.ok(LRU_SET.includes(n), `lru-cache's set reads ${n}`);
  }
});

test("every lru-cache constructor option lapse lacks fails with a hint", () => {
  checkHints(LRU_CTOR, SHARED_CTOR, EQUIVALENT_CTOR, (o) => new TtlCache(o), "options");
});

test("every lru-cache set() option lapse lacks fails with a hint, for set and hset, changing nothing", () => {
  const c = new TtlCache({ now: 0 });
  c.set("a", 1);
  c.hset("h", "f", 1);
  checkHints(LRU_SET, SHARED_SET, EQUIVALENT_SET, (o) => c.set("a", 2, o), "opts");
  checkHints(LRU_SET, SHARED_SET, EQUIVALENT_SET, (o) => c.hset("h", "f", 2, o), "opts");
  assert.equal(c.get("a"), 2); // only the accepted { ttl: undefined } writes went through
  assert.equal(c.hget("h", "f"), 2);
});

test("a name lru-cache does not know gets no lru-cache hint", () => {
  assert.throws(() => new TtlCache({ maxItems: 1 }), { name: "TypeError", message: 'options: unknown option "maxItems"' });
  assert.throws(() => new TtlCache({ now: 0 }).set("a", 1, { max: 1 }), { name: "TypeError", message: 'opts: unknown option "max"' });
  // A constructor-only lru-cache name given to restore() is not a constructor: no hint there either.
  const bytes = new TtlCache({ now: 0 }).snapshot();
  assert.throws(() => TtlCache.restore(bytes, { max: 1 }), { name: "TypeError", message: 'opts: unknown option "max"' });
});
