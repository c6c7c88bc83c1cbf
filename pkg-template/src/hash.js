// The value a hash key holds in the cache's value list.

/** The fields of one hash key: field name -> slot. */
export class Hash {
  constructor() {
    this.fields = new Map();
    // Every field is in grace (stale-if-error): the key is dead to reads,
    // which then need not walk its fields to learn it.
    this.graced = false;
    // A field slot last seen live with the latest deadline: while it lives,
    // the hash is live without a scan of its fields (see #liveKey).
    this.witness = -1;
  }
}
