// The value a hash key holds in the cache's value list.

/** The fields of one hash key: field name -> slot. */
export class Hash {
  // A brand that isHash asks for: `instanceof` would ask a Proxy value's
  // getPrototypeOf trap (user code, run mid-call) and throws for a revoked one.
  #brand;
  constructor() {
    this.fields = new Map();
    // Every field is in grace (stale-if-error): the key is dead to reads,
    // which then need not walk its fields to learn it.
    this.graced = false;
    // A field slot last seen live with the latest deadline: while it lives,
    // the hash is live without a scan of its fields (see #liveKey).
    this.witness = -1;
  }

  static is(v) {
    return typeof v === "object" && v !== null && #brand in v;
  }
}

/** Whether `v` is a hash's `Hash`; never runs user code, for any value. */
export const isHash = Hash.is;
