// Every number that crosses between this host and the engine (src/binding.rs,
// src/engine/) or its snapshot format (SNAPSHOT.md, src/snapshot/): hand
// copies of Rust values, kept here in one file so that replacing them with a
// generated module is a one-file change.

export const NIL = 0xffffffff;
export const FAILED = 0xfffffffe; // write/hwrite: the call threw; fetch it with takeError()
export const REASONS = ["expired", "evicted", "deleted", "replaced", "cleared"];
export const EXPIRED = 0;
export const FOUND_EXPIRED = 255; // remove(): lazy expiry, which a value's grace may defer
export const DELETED = 2;
export const KIND_PLAIN = 1;
export const KIND_HASH = 2;
export const KIND_FIELD = 3;
export const GHOST = 1 << 7;
export const GRACED = 1 << 8; // the removed slot was in grace (engine LOG_GRACED)
export const ENTER_GRACE = 5; // a log record that keeps its slot (engine LOG_ENTER_GRACE)
export const EVICTED = 1;
export const CLEARED = 4;
export const HAS_TTL = 1;
export const HAS_IDLE = 2;
export const HAS_AT = 4;
export const KEEP_TTL = 8;
export const TO_MAIN = 16;
export const MAX_FREQ = 3;
export const TO_MAIN_BIT = 0x80000000;
// Status block words (see binding.rs ST_*).
export const ST_LOG = 0;
export const ST_LOG_LEN = 1;
export const ST_CAP = 2;
export const ST_TIMES = 3;
export const ST_FREQ = 4;
export const ST_PENDING_PTR = 5;
export const ST_PENDING = 6;
export const ST_ENTRIES = 7;
export const ST_SPARE = 8;
export const ST_SPARE_LEN = 9;
export const ST_HASH = 10;
export const ST_NOW = 11;
export const CONDS = { NX: 1, XX: 2, GT: 3, LT: 4 };

// Snapshot format (SNAPSHOT.md): value tags.
export const F_UNDEF = 0;
export const F_NULL = 1;
export const F_FALSE = 2;
export const F_TRUE = 3;
export const F_INT = 4;
export const F_FLOAT = 5;
export const F_STRING = 6;
export const F_ARRAY = 7;
export const F_OBJECT = 8;
export const F_NULL_OBJECT = 9;
export const F_BYTES = 10;
export const F_DATE = 11;
export const F_MAP = 12;
export const F_BIGINT = 13;
export const F_NEG_BIGINT = 14;
