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
