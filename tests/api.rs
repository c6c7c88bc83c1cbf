//! The crate's API as a moka/lru/quick_cache user expects it: borrowed-key
//! lookups, `Option` reads, `Send`/`Sync` for shared use, values handed back
//! by `set`/`remove`, and errors in this crate's names.

use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::thread;

use lapse_cache::{Error, Options, Reason, Removed, SetOptions, TtlCache};

fn send_sync<T: Send + Sync>() {}

#[test]
fn the_cache_is_send_and_sync() {
    // Compile-time: a callback capturing a Sender (Send) must not stop the
    // cache from being Sync; a `Box<dyn FnMut>` without `+ Send` fails here.
    send_sync::<TtlCache<String, Vec<u8>>>();
    send_sync::<TtlCache<u64, String, std::hash::RandomState>>();
}

#[test]
fn arc_mutex_crosses_threads_with_a_callback() {
    let (tx, rx) = mpsc::channel::<Removed<String, u64>>();
    let mut c = TtlCache::new(0.0);
    c.on_remove(move |r| tx.send(r).unwrap());
    let c = Arc::new(Mutex::new(c));
    let workers: Vec<_> = (0..4u64)
        .map(|t| {
            let c = Arc::clone(&c);
            thread::spawn(move || {
                for i in 0..100 {
                    let w = SetOptions { ttl: Some(10.0), ..Default::default() };
                    c.lock().unwrap().set(format!("{t}:{i}"), t * 1000 + i, w).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut c = c.lock().unwrap();
    assert_eq!(c.len(), 400);
    assert_eq!(c.get("3:99"), Some(&3099));
    assert_eq!(c.tick(10.0).unwrap(), 400);
    drop(c);
    let gone: Vec<_> = rx.try_iter().collect();
    assert_eq!(gone.len(), 400);
    assert!(gone.iter().all(|r| r.reason == Reason::Expired));
}

#[test]
fn shared_reads_through_a_rwlock() {
    let mut c = TtlCache::new(0.0);
    c.set("k".to_string(), 1u8, SetOptions::default()).unwrap();
    let c = Arc::new(RwLock::new(c));
    let r = Arc::clone(&c);
    let seen = thread::spawn(move || r.read().unwrap().peek("k").copied()).join().unwrap();
    assert_eq!(seen, Some(1));
}

#[test]
fn borrowed_keys_and_option_reads() {
    let mut c: TtlCache<String, u32> = TtlCache::new(0.0);
    c.set("a".to_string(), 1, SetOptions::default()).unwrap();
    assert_eq!(c.get("a"), Some(&1));
    assert_eq!(c.peek("a"), Some(&1));
    assert!(c.contains("a"));
    assert_eq!(c.ttl("a"), Some(f64::INFINITY));
    assert_eq!(c.get("b"), None);
    // A hash reads as absent through the plain reads; try_* tell it apart.
    c.hset("h".to_string(), "f", 2, SetOptions::default()).unwrap();
    assert_eq!(c.get("h"), None);
    assert_eq!(c.peek("h"), None);
    assert!(matches!(c.try_get("h"), Err(Error::WrongType { .. })));
    assert!(matches!(c.try_peek("h"), Err(Error::WrongType { .. })));
    assert_eq!(c.try_get("a").unwrap(), Some(&1));
    assert_eq!(c.hget("h", "f").unwrap(), Some(&2));
    // The hash read was a miss, not a hit (two misses: "b" and "h").
    assert_eq!((c.stats().hits, c.stats().misses), (3, 2));
}

#[test]
fn set_and_remove_hand_values_back_and_the_callback_sees_the_rest() {
    let gone = Arc::new(Mutex::new(Vec::new()));
    let mut c = TtlCache::new(0.0);
    let g = Arc::clone(&gone);
    c.on_remove(move |r: Removed<String, u32>| g.lock().unwrap().push((r.key, r.value, r.reason)));
    assert_eq!(c.insert("a".into(), 1).unwrap(), None);
    assert_eq!(c.insert("a".into(), 2).unwrap(), Some(1));
    let now = SetOptions { expire_at: Some(0.0), ..Default::default() };
    assert_eq!(c.set("a".into(), 3, now).unwrap(), Some(2), "a write that deletes still hands back the live value");
    assert!(!c.contains("a"));
    c.set("b".into(), 4, SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
    c.tick(5.0).unwrap();
    assert_eq!(c.set("b".into(), 5, SetOptions::default()).unwrap(), None, "an expired value is not handed back");
    assert_eq!(c.remove("b"), Some(5));
    assert_eq!(c.remove("b"), None);
    c.insert("c".into(), 6).unwrap();
    assert!(c.delete("c"));
    let gone = gone.lock().unwrap();
    assert_eq!(
        *gone,
        vec![("b".to_string(), 4, Reason::Expired), ("c".to_string(), 6, Reason::Deleted)],
        "values handed back never reach the callback; the rest do, once"
    );
}

#[test]
fn get_or_insert_with_loads_once() {
    let mut c: TtlCache<String, String> =
        TtlCache::with_options(Options { ttl: Some(10.0), ..Default::default() }, 0.0).unwrap();
    let mut calls = 0;
    for _ in 0..3 {
        let v = c.get_or_insert_with("k".into(), || {
            calls += 1;
            "v".to_string()
        });
        assert_eq!(v.unwrap(), "v");
    }
    assert_eq!(calls, 1);
    assert_eq!(c.ttl("k"), Some(10.0), "the cache's default ttl applies");
    c.tick(10.0).unwrap();
    assert_eq!(c.get_or_insert_with("k".into(), || "w".to_string()).unwrap(), "w");
    c.hset("h".into(), "f", "x".into(), SetOptions::default()).unwrap();
    assert!(matches!(c.get_or_insert_with("h".into(), String::new), Err(Error::WrongType { .. })));
}

#[test]
fn get_or_insert_with_a_write_that_ends_at_once() {
    // A default ttl below the clock's float resolution: the write deletes
    // instead of storing, so there is no value to hand back (an error, never
    // a panic or another slot's value).
    let o = Options { ttl: Some(0.0001), ..Default::default() };
    let mut c: TtlCache<String, u8> = TtlCache::with_options(o, 1.7e12).unwrap();
    assert!(matches!(c.get_or_insert_with("k".into(), || 1), Err(Error::Range { .. })));
    assert!(c.is_empty());
    assert_eq!(c.stats().misses, 1);
}

#[test]
fn errors_name_this_crates_fields() {
    let e = TtlCache::<u8, u8>::with_options(Options { max_entries: Some(0), ..Default::default() }, 0.0).unwrap_err();
    assert!(matches!(e, Error::Range { arg: "max_entries", .. }), "{e:?}");
    let mut c = TtlCache::<u8, u8>::new(0.0);
    let e = c.set(1, 1, SetOptions { keep_ttl: true, ttl: Some(1.0), ..Default::default() }).unwrap_err();
    let text = e.to_string();
    assert!(text.starts_with("keep_ttl:") && !text.contains("keepTtl") && !text.contains("expireAt"), "{text}");
}

#[test]
fn default_overwrites_of_live_entries_keep_every_write_rule() {
    // An overwrite with the cache's own clocks (`insert`, or `set` with no
    // per-write option) of a live plain entry takes the native host's
    // short path; each rule the general write keeps must hold there too.
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    // The write-time reclaim of a followed clock: an expired neighbour goes.
    let t = Arc::new(AtomicU64::new(0));
    let src = t.clone();
    let mut c = TtlCache::with_clock(Options::default(), move || src.load(Relaxed) as f64).unwrap();
    c.set("old", 1, SetOptions { ttl: Some(5.0), ..Default::default() }).unwrap();
    c.insert("k", 1).unwrap();
    t.store(9, Relaxed);
    assert_eq!(c.insert("k", 2).unwrap(), Some(1));
    assert_eq!(c.len(), 1, "the overwrite reclaimed the expired key");

    // A weighted entry rewritten at weight 0 gives its weight back.
    let mut c = TtlCache::with_options(Options { max_bytes: Some(10), ..Default::default() }, 0.0).unwrap();
    c.set_sized("a", 1, SetOptions::default(), 6).unwrap();
    assert_eq!(c.insert("a", 2).unwrap(), Some(1));
    assert_eq!(c.stats().bytes, 0);
    assert_eq!(c.stats().counters.updated, 1);

    // Default clocks that end at `now` delete the key (handing its value back).
    let o = Options { ttl: Some(0.0001), ..Default::default() };
    let mut c = TtlCache::with_options(o, 1.7e12).unwrap();
    c.set("k", 1, SetOptions { ttl: Some(1000.0), ..Default::default() }).unwrap();
    assert_eq!(c.insert("k", 2).unwrap(), Some(1));
    assert!(!c.contains("k"));
    assert_eq!((c.len(), c.stats().counters.deleted), (0, 1), "deleted, not left to expire");

    // Default clocks that overflow are a range error, and change nothing.
    let o = Options { ttl: Some(1e308), ..Default::default() };
    let mut c = TtlCache::with_options(o, 1.7e308).unwrap();
    c.set("k", 1, SetOptions { expire_at: Some(f64::MAX), ..Default::default() }).unwrap();
    assert!(matches!(c.insert("k", 2), Err(Error::Range { .. })));
    assert_eq!(c.get("k"), Some(&1));
}

#[test]
fn entries_without_clocks_read_fast_and_still_follow_every_clock_change() {
    // A plain entry with no deadline and no idle window is read without the
    // engine's clock row; any change that gives it clocks must end that.
    let o = Options { sweep_budget: Some(0), ..Default::default() }; // nothing swept: reads decide
    let mut c = TtlCache::with_options(o, 0.0).unwrap();
    for k in ["e", "a", "w", "d"] {
        c.insert(k, 1).unwrap();
    }
    assert!(c.expire("e", 10.0, None).unwrap());
    assert!(c.expire_at("a", 10.0, None).unwrap());
    c.set("w", 2, SetOptions { ttl: Some(10.0), ..Default::default() }).unwrap();
    c.set("d", 2, SetOptions { idle: Some(10.0), ..Default::default() }).unwrap();
    c.tick(10.0).unwrap();
    for k in ["e", "a", "w", "d"] {
        assert_eq!(c.get(k), None, "{k} has a clock now, and it ran out");
    }

    // A read's time reaches the snapshot's last access when it restarts an
    // idle window; an entry with none keeps its write time there (both
    // hosts: the JS host's refresh-ahead reads an old entry's age from it).
    let mut c = TtlCache::new(0.0);
    c.insert("k".to_string(), 1.0).unwrap();
    c.set("i".to_string(), 2.0, SetOptions { idle: Some(100.0), ..Default::default() }).unwrap();
    c.tick(5.0).unwrap();
    assert_eq!(c.get("k"), Some(&1.0));
    assert_eq!(c.get("i"), Some(&2.0));
    c.tick(7.0).unwrap();
    let key = |k: &String| k.encode_utf16().collect();
    let snap = c.snapshot_with(key, |_, _, v| Ok(lapse_cache::snapshot::Value::Number(*v))).unwrap();
    assert_eq!((snap.entries[0].clocks.last, snap.entries[1].clocks.last), (0.0, 5.0));

    // So does a read under a followed clock (which the read itself reads).
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let t = Arc::new(AtomicU64::new(0));
    let src = t.clone();
    let mut c = TtlCache::with_clock(Options::default(), move || src.load(Relaxed) as f64).unwrap();
    c.set("k".to_string(), 1.0, SetOptions { idle: Some(100.0), ..Default::default() }).unwrap();
    t.store(5, Relaxed);
    assert_eq!(c.get("k"), Some(&1.0));
    let snap = c.snapshot_with(key, |_, _, v| Ok(lapse_cache::snapshot::Value::Number(*v))).unwrap();
    assert_eq!(snap.entries[0].clocks.last, 5.0);

    // A read while bare moves nothing, and the clocks that end the fast
    // read find the write time (the JS host snapshots 0 here too).
    let mut c = TtlCache::new(0.0);
    c.insert("k".to_string(), 1.0).unwrap();
    c.tick(5.0).unwrap();
    assert_eq!(c.get("k"), Some(&1.0));
    c.tick(6.0).unwrap();
    assert!(c.expire("k", 100.0, None).unwrap());
    assert_eq!(c.get("k"), Some(&1.0));
    let snap = c.snapshot_with(key, |_, _, v| Ok(lapse_cache::snapshot::Value::Number(*v))).unwrap();
    assert_eq!(snap.entries[0].clocks.last, 0.0, "no idle window: the write time");

    // A bare entry never read keeps its written last access, even a negative
    // one (found by the snapshot_decode fuzzer: an unread item counted as
    // read at time 0).
    let mut c = TtlCache::new(-50.0);
    c.insert("k".to_string(), 1.0).unwrap();
    c.tick(-10.0).unwrap();
    let snap = c.snapshot_with(key, |_, _, v| Ok(lapse_cache::snapshot::Value::Number(*v))).unwrap();
    assert_eq!(snap.entries[0].clocks.last, -50.0);
    let back = TtlCache::<String, f64>::restore_with(&snap, |k| Ok(String::from_utf16_lossy(k)), |_| Ok(1.0)).unwrap();
    let again = back.snapshot_with(key, |_, _, v| Ok(lapse_cache::snapshot::Value::Number(*v))).unwrap();
    assert_eq!(again.entries[0].clocks.last, -50.0, "restore + snapshot keeps it");
}

/// Bounds a snapshot can hold (up to 2^53 - 1, or none) are the ones the
/// constructor takes: 2^53 was accepted, and then the cache's own snapshot
/// could not be encoded. Errors from a snapshot's options name this crate's
/// fields, as the constructor's do.
#[test]
fn bounds_and_snapshot_errors_agree_with_the_constructor() {
    use lapse_cache::snapshot::{self, ClockMode, Snapshot, Value};
    for big in [1u64 << 53, u64::MAX - 1] {
        let e = TtlCache::<String, u64>::with_options(Options { max_entries: Some(big), ..Default::default() }, 0.0)
            .unwrap_err();
        assert!(matches!(e, Error::Range { arg: "max_entries", .. }), "{e}");
        let e = TtlCache::<String, u64>::with_options(Options { max_bytes: Some(big), ..Default::default() }, 0.0)
            .unwrap_err();
        assert!(matches!(e, Error::Range { arg: "max_bytes", .. }), "{e}");
    }
    for ok in [(1u64 << 53) - 1, u64::MAX] {
        let c = TtlCache::<String, u64>::with_options(Options { max_entries: Some(ok), ..Default::default() }, 0.0)
            .unwrap();
        let s = c.snapshot_with(|k| k.encode_utf16().collect(), |_, _, v| Ok(Value::Number(*v as f64))).unwrap();
        snapshot::encode(&s).unwrap();
    }
    let s = Snapshot {
        now: 0.0,
        clock: ClockMode::Manual,
        options: Options { max_entries: Some(0), ..Default::default() },
        entries: vec![],
    };
    let from_restore = TtlCache::<String, u32>::restore_with(&s, |u| Ok(String::from_utf16_lossy(u)), |_| Ok(0))
        .map(|_| ())
        .unwrap_err();
    let from_new = TtlCache::<String, u32>::with_options(s.options.clone(), 0.0).map(|_| ()).unwrap_err();
    assert_eq!(from_restore, from_new);
    assert_eq!(s.validate().unwrap_err(), from_new);
    assert!(from_new.to_string().contains("max_entries"), "{from_new}");
}

#[test]
fn errors_name_the_rust_arguments_and_rust_limits() {
    use lapse_cache::{Error, Options, SetOptions, TtlCache};
    let range = |e: Error| match e {
        Error::Range { arg, msg } => (arg, msg),
        e => panic!("not a range error: {e}"),
    };
    let e = TtlCache::<String, u8>::with_options(Options { max_entries: Some(0), ..Default::default() }, 0.0);
    let (arg, msg) = range(e.expect_err("max_entries 0 is refused"));
    assert_eq!(arg, "max_entries");
    assert!(msg.ends_with("or None"), "{msg}");
    let e = TtlCache::<String, u8>::with_options(Options { ttl: Some(-1.0), ..Default::default() }, 0.0);
    let (arg, msg) = range(e.expect_err("a negative ttl is refused"));
    assert_eq!(arg, "ttl");
    assert!(msg.contains("or f64::INFINITY") && !msg.contains("or Infinity"), "{msg}");
    let mut c =
        TtlCache::<String, u8>::with_options(Options { max_bytes: Some(10), ..Default::default() }, 0.0).unwrap();
    let (arg, msg) = range(c.set_sized("k".to_string(), 1, SetOptions::default(), 11).unwrap_err());
    assert_eq!(arg, "weight", "{msg}");
}
