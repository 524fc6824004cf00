//! The requests of a conversation by (sender, id) ([`Requests`]): the keys
//! with open (unanswered) requests in one map, and the keys all answered
//! within the last [`MAX_ANSWERED_KEYS_KEPT`] answers in a fixed ring
//! ([`Answered`]) indexed by a table of slot numbers.
//!
//! Memory: the open requests, plus at most [`MAX_ANSWERED_KEYS_KEPT`]
//! answered keys (one ring slot each, ~100 bytes) and at most twice that
//! many index entries (8 bytes plus a control byte of a bucket each), never
//! the length of the session. The key that leaves the window is dropped
//! from the ring at the answer that takes its slot, and its index entry at
//! the next prune, so neither grows past that (issue 22: the one map of
//! open and answered keys grew from 2^17 to 2^18 buckets of ~112 bytes
//! under the churn of remembered and forgotten keys, both tables alive
//! during the resize).

use std::hash::BuildHasher;

use hashbrown::HashTable;
use mcptape_transcript::Direction;

use super::view::IdKey;
use super::{MAX_ANSWERED_KEYS_KEPT, MethodName, Pending};

/// A request key: its sender and its id.
pub(super) type Key = (Direction, IdKey);

/// The open requests of one key, in the order they were sent: one held in
/// place (the common case, a request then its answer, costs no allocation
/// and no free), more spill to the heap.
pub(super) type OpenList = smallvec::SmallVec<[Pending; 1]>;

/// What is remembered of a key, open or answered.
#[derive(Debug)]
pub(super) struct KeyInfo {
    /// When the key was first seen, in key order: the end-of-file report
    /// lists keys in that order (deterministic).
    pub(super) key_seq: u64,
    /// Method of the first request sent with this key.
    pub(super) first_method: MethodName,
    /// Record of the first request sent with this key.
    pub(super) first_record: usize,
    /// Record of the last request sent with this key.
    pub(super) last_record: usize,
}

/// A key with open requests.
#[derive(Debug)]
pub(super) struct KeyRequests {
    pub(super) info: KeyInfo,
    /// Its requests not answered yet, oldest first (never empty while the
    /// key is open).
    pub(super) open: OpenList,
}

/// What [`Requests::lookup`] finds of a key.
pub(super) enum Lookup<'r> {
    /// The key has open requests.
    Open(&'r KeyRequests),
    /// All its requests are answered, the last within the window.
    Answered(&'r KeyInfo),
    /// Never seen, or forgotten.
    Unknown,
}

/// The requests by key ([module docs](self)).
pub(super) struct Requests {
    /// The one hash of a key, for both tables (foldhash's quality hasher,
    /// seeded per process: ids are untrusted input).
    hasher: foldhash::quality::RandomState,
    /// Keys with at least one open request.
    open: HashTable<OpenKey>,
    /// Keys all answered, the last [`MAX_ANSWERED_KEYS_KEPT`] answers.
    answered: Answered,
    /// The last [`KeyInfo::key_seq`] handed out.
    next_key_seq: u64,
    /// Keys held (open or answered) whose id is an integer (`[0]`) or a
    /// string (`[1]`): a lookup of a type none has is answered without
    /// touching the tables (every request looks up its id's other type for
    /// `ids-differ-only-in-type`, a cold table slot each).
    held: [usize; 2],
}

/// A key with open requests in [`Requests::open`].
struct OpenKey {
    hash: u64,
    key: Key,
    list: KeyRequests,
}

impl Requests {
    pub(super) fn new() -> Requests {
        Requests {
            hasher: foldhash::quality::RandomState::default(),
            open: HashTable::new(),
            answered: Answered::default(),
            next_key_seq: 0,
            held: [0; 2],
        }
    }

    /// The hash of key `k` in both tables: computed once by a caller that
    /// looks a key up and then takes it ([`Self::lookup_hashed`],
    /// [`Self::take_answered_hashed`]).
    pub(super) fn hash(&self, k: &Key) -> u64 {
        self.hasher.hash_one(k)
    }

    /// Key `k`: open, answered within the window, or unknown.
    pub(super) fn lookup(&self, k: &Key) -> Lookup<'_> {
        if self.held[usize::from(k.1.is_string)] == 0 {
            return Lookup::Unknown;
        }
        self.lookup_hashed(self.hash(k), k)
    }

    /// [`Self::lookup`] of key `k` whose [`Self::hash`] is `hash`.
    pub(super) fn lookup_hashed(&self, hash: u64, k: &Key) -> Lookup<'_> {
        if self.held[usize::from(k.1.is_string)] == 0 {
            return Lookup::Unknown;
        }
        if let Some(o) = self.open.find(hash, |o| o.key == *k) {
            return Lookup::Open(&o.list);
        }
        match self.answered.get(hash, k) {
            Some(info) => Lookup::Answered(info),
            None => Lookup::Unknown,
        }
    }

    /// What is remembered of key `k`: open, or answered within the window.
    pub(super) fn known(&self, k: &Key) -> Option<&KeyInfo> {
        match self.lookup(k) {
            Lookup::Open(list) => Some(&list.info),
            Lookup::Answered(info) => Some(info),
            Lookup::Unknown => None,
        }
    }

    /// The open requests of key `k`, to mark them (`None`: it has none).
    pub(super) fn open_mut(&mut self, k: &Key) -> Option<&mut KeyRequests> {
        let hash = self.hash(k);
        self.open
            .find_mut(hash, |o| o.key == *k)
            .map(|o| &mut o.list)
    }

    /// Every key with open requests (arbitrary order).
    pub(super) fn iter_open(&self) -> impl Iterator<Item = (&Key, &KeyRequests)> {
        self.open.iter().map(|o| (&o.key, &o.list))
    }

    /// Every key with open requests, to mark them (arbitrary order).
    pub(super) fn iter_open_mut(&mut self) -> impl Iterator<Item = (&Key, &mut KeyRequests)> {
        self.open.iter_mut().map(|o| (&o.key, &mut o.list))
    }

    /// How many answered keys were forgotten (left the window still
    /// answered).
    pub(super) fn forgotten(&self) -> u64 {
        self.answered.forgotten
    }

    /// Adds request `p` sent with key `k` at `record`: to the key's open
    /// requests, to what is remembered of its last answer (the key is open
    /// again: that answer no longer stands for it), or as a new key (its
    /// first method `method`). Sent while the key was open, `p` is told the record of the
    /// last request open under it ([`Pending::sent_while_open`]). Returns the record of the
    /// last request sent with `k`, and the id, when every request of the key had been answered
    /// within the window (the id is used again after its answer); `None` otherwise.
    pub(super) fn push(
        &mut self,
        k: Key,
        method: &str,
        record: usize,
        mut p: Pending,
    ) -> Option<(usize, &IdKey)> {
        let hash = self.hash(&k);
        let mut reused = None;
        let key = match self.open.entry(hash, |o| o.key == k, |o| o.hash) {
            hashbrown::hash_table::Entry::Occupied(e) => {
                let o = e.into_mut();
                p.sent_while_open = o.list.open.last().map(|q| q.place.record);
                o
            }
            hashbrown::hash_table::Entry::Vacant(v) => {
                let info = match self.answered.take(hash, &k) {
                    Some(info) => {
                        reused = Some(info.last_record);
                        info
                    }
                    None => {
                        self.held[usize::from(k.1.is_string)] += 1;
                        self.next_key_seq += 1;
                        KeyInfo {
                            key_seq: self.next_key_seq,
                            first_method: super::method_name(method),
                            first_record: record,
                            last_record: record,
                        }
                    }
                };
                let o = OpenKey {
                    hash,
                    key: k,
                    list: KeyRequests {
                        info,
                        // Most keys hold one request at a time: in place, no allocation.
                        open: OpenList::new(),
                    },
                };
                v.insert(o).into_mut()
            }
        };
        key.list.info.last_record = record;
        key.list.open.push(p);
        reused.map(|r| (r, &key.key.1))
    }

    /// Takes the open request `i` of key `k` out as answered; the key is
    /// remembered (at most [`MAX_ANSWERED_KEYS_KEPT`] such) once all its
    /// requests are.
    pub(super) fn take_answered(&mut self, k: &Key, i: usize) -> Option<Pending> {
        self.take_answered_hashed(self.hash(k), k, i)
    }

    /// [`Self::take_answered`] of key `k` whose [`Self::hash`] is `hash`.
    pub(super) fn take_answered_hashed(&mut self, hash: u64, k: &Key, i: usize) -> Option<Pending> {
        let mut e = self.open.find_entry(hash, |o| o.key == *k).ok()?;
        let open = &mut e.get_mut().list.open;
        if i >= open.len() {
            return None;
        }
        let p = open.remove(i);
        if open.is_empty() {
            let (o, _) = e.remove();
            if let Some(gone) = self.answered.push(o.hash, o.key, o.list.info) {
                self.held[usize::from(gone.1.is_string)] -= 1;
            }
        }
        Some(p)
    }
}

/// The keys all answered within the last [`MAX_ANSWERED_KEYS_KEPT`] answers:
/// answer generation `g` (counted from 0) sits in ring slot
/// `g % MAX_ANSWERED_KEYS_KEPT` until the answer `MAX_ANSWERED_KEYS_KEPT`
/// later takes the slot (the key is forgotten then, if its slot still held
/// it) or a new request with the key takes it back out (the slot is emptied).
#[derive(Default)]
struct Answered {
    /// Slot per answer generation; `None`: that answer no longer stands.
    ring: Vec<Option<AnsweredKey>>,
    /// The slots of `ring` holding a key, by the key's hash, each with the
    /// hash's low 32 bits. An entry whose slot was taken by a later answer
    /// is left in place (its lookups compare the key: it never matches) and
    /// dropped by the next prune ([`RingIndex`]), so that forgetting a key
    /// costs no lookup of its cold index slot.
    index: RingIndex,
    /// Answers handed a slot so far.
    generation: u64,
    /// Keys that left the window still answered.
    forgotten: u64,
}

/// An answered key in its ring slot.
struct AnsweredKey {
    /// The key's hash ([`Requests::hash`]), for the index.
    hash: u64,
    key: Key,
    info: KeyInfo,
}

// The slot numbers of the ring fit the index's `u32`.
const _: () = assert!(MAX_ANSWERED_KEYS_KEPT <= u32::MAX as usize);

impl Answered {
    /// Key `k` (of hash `hash`), if answered within the window.
    fn get(&self, hash: u64, k: &Key) -> Option<&KeyInfo> {
        self.index
            .get(&self.ring, hash, |a| a.key == *k)
            .map(|a| &a.info)
    }

    /// Takes key `k` (of hash `hash`) out (a new request with it): its
    /// slot's answer no longer stands.
    fn take(&mut self, hash: u64, k: &Key) -> Option<KeyInfo> {
        self.index
            .take(&mut self.ring, hash, |a| a.key == *k)
            .map(|a| a.info)
    }

    /// The next answer's key (of hash `hash`): into the next slot,
    /// forgetting the key whose answer held it (if it still stood: that key
    /// is returned).
    fn push(&mut self, hash: u64, key: Key, info: KeyInfo) -> Option<Key> {
        let slot = (self.generation % MAX_ANSWERED_KEYS_KEPT as u64) as usize;
        self.generation += 1;
        let entry = Some(AnsweredKey { hash, key, info });
        let ring = &mut self.ring;
        let mut forgot = None;
        if slot == ring.len() {
            ring.push(entry);
        } else if let Some(old) = ring.get_mut(slot) {
            if let Some(gone) = old.take() {
                self.forgotten += 1;
                forgot = Some(gone.key);
            }
            *old = entry;
        }
        // `slot` < MAX_ANSWERED_KEYS_KEPT, which fits a `u32` (asserted
        // above).
        self.index
            .insert(&self.ring, hash, slot as u32, STALE_PRUNE_AT);
        forgot
    }
}

impl Answered {
    /// Drops the stale index entries now (tests; answers prune as they go).
    #[cfg(test)]
    fn prune(&mut self) {
        self.index.prune(&self.ring);
    }
}

impl Hashed for AnsweredKey {
    fn hash(&self) -> u64 {
        self.hash
    }
}

/// Index entries (current and stale) at which the answered keys' index is
/// pruned: twice [`MAX_ANSWERED_KEYS_KEPT`] (at most one window is current).
const STALE_PRUNE_AT: usize = 2 * MAX_ANSWERED_KEYS_KEPT;

/// Index entries at which a [`RingIndex`] reserves room for all it may hold
/// before a prune (4,096: a short conversation keeps a small table).
pub(crate) const INDEX_RESERVE_AT: usize = 4096;

/// An item of a ring indexed by a [`RingIndex`]: its hash.
pub(crate) trait Hashed {
    /// The hash the item is indexed under.
    fn hash(&self) -> u64;
}

/// The occupied slots of a ring (`[Option<T>]`, one slot per answer
/// generation) by their item's hash: each entry a slot number and the low
/// 32 bits of the hash. An entry whose slot was taken by a later item is
/// left in place (its lookups test the item: it never matches) and dropped
/// by the next prune, once the index holds `prune_at` entries, so that
/// forgetting an item costs no lookup of its cold entry. Used by check's
/// answered keys and inspect's answered reads.
#[derive(Default)]
pub(crate) struct RingIndex {
    table: HashTable<(u32, u32)>,
}

impl RingIndex {
    /// Entries, current and stale.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// No entry at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Entries the table holds without growing.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.table.capacity()
    }

    /// The item of hash `hash` in `ring` that `is` accepts.
    pub(crate) fn get<'r, T>(
        &self,
        ring: &'r [Option<T>],
        hash: u64,
        is: impl Fn(&T) -> bool,
    ) -> Option<&'r T> {
        let (slot, _) = self
            .table
            .find(hash, |&(s, _)| item(ring, s).is_some_and(&is))?;
        item(ring, *slot)
    }

    /// Takes the item of hash `hash` that `is` accepts out of `ring` (its
    /// slot emptied, its entry dropped).
    pub(crate) fn take<T>(
        &mut self,
        ring: &mut [Option<T>],
        hash: u64,
        is: impl Fn(&T) -> bool,
    ) -> Option<T> {
        if self.table.is_empty() {
            return None;
        }
        let r = &*ring;
        let ((slot, _), _) = self
            .table
            .find_entry(hash, |&(s, _)| item(r, s).is_some_and(&is))
            .ok()?
            .remove();
        ring.get_mut(slot as usize)?.take()
    }

    /// Drops the stale entries: an entry stays when its slot holds an item
    /// whose hash has its low bits.
    pub(crate) fn prune<T: Hashed>(&mut self, ring: &[Option<T>]) {
        self.table
            .retain(|&mut (s, low)| item(ring, s).is_some_and(|t| t.hash() as u32 == low));
    }

    /// Indexes the item of hash `hash` just put in ring slot `slot`; first
    /// prunes the stale entries when there are `prune_at` entries (a pass
    /// over the table, [`Self::prune`]). Past [`INDEX_RESERVE_AT`] entries the table
    /// takes room for `prune_at` at once: grown by doubling, each growth
    /// rehashed every entry by its ring slot (a cold read each).
    pub(crate) fn insert<T: Hashed>(
        &mut self,
        ring: &[Option<T>],
        hash: u64,
        slot: u32,
        prune_at: usize,
    ) {
        if self.table.len() >= prune_at {
            self.prune(ring);
        }
        // A stale entry is rehashed by the item now in its slot (or by 0),
        // which only moves it.
        let rehash = |&(s, _): &(u32, u32)| item(ring, s).map_or(0, Hashed::hash);
        if self.table.len() == INDEX_RESERVE_AT {
            self.table
                .reserve((prune_at + 1).saturating_sub(INDEX_RESERVE_AT), rehash);
        }
        // The low 32 bits of the hash are meant.
        self.table.insert_unique(hash, (slot, hash as u32), rehash);
    }
}

/// The item in ring slot `s`, if any.
fn item<T>(ring: &[Option<T>], s: u32) -> Option<&T> {
    ring.get(s as usize)?.as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Place;

    fn key(i: usize) -> Key {
        let id = IdKey::from_token(&i.to_string()).expect("an integer id");
        (Direction::C2s, id)
    }

    fn pending(record: usize) -> Pending {
        Pending {
            place: Place {
                record,
                line: record,
            },
            batch_index: None,
            exchange: None,
            mismatch_finding: None,
            method: super::super::method_name("ping"),
            uri: None,
            cancelled: false,
            sent_while_open: None,
        }
    }

    /// Asks and answers key `i` at record `i`.
    fn ask_and_answer(r: &mut Requests, i: usize) {
        r.push(key(i), "ping", i, pending(i));
        assert!(r.take_answered(&key(i), 0).is_some());
    }

    /// Three windows of answered keys: the ring and its index hold one
    /// window, never more, and every key that left it was forgotten.
    /// One open request per key is held in place; a key asked three times
    /// before any answer spills to the heap and answers them in the order
    /// asked, then leaves the open table.
    #[test]
    fn a_key_asked_three_times_before_an_answer_answers_them_in_order() {
        let mut r = Requests::new();
        r.push(key(1), "ping", 1, pending(1));
        assert!(!r.open_mut(&key(1)).unwrap().open.spilled());
        r.push(key(1), "ping", 2, pending(2));
        r.push(key(1), "ping", 3, pending(3));
        assert!(r.open_mut(&key(1)).unwrap().open.spilled());
        let records: Vec<usize> = (0..3)
            .map(|_| r.take_answered(&key(1), 0).unwrap().place.record)
            .collect();
        assert_eq!(records, [1, 2, 3]);
        assert!(r.take_answered(&key(1), 0).is_none());
        assert!(r.open.is_empty());
        let info = r.known(&key(1)).expect("answered key kept");
        assert_eq!((info.first_record, info.last_record), (1, 3));
    }

    /// The index of answered keys grows by itself up to
    /// [`INDEX_RESERVE_AT`] entries and takes room for [`STALE_PRUNE_AT`]
    /// at the answer one past; every key answered stays known.
    #[test]
    fn answered_index_reserves_its_room_one_past_index_reserve_at() {
        let mut r = Requests::new();
        for i in 0..INDEX_RESERVE_AT {
            ask_and_answer(&mut r, i);
        }
        assert_eq!(r.answered.index.len(), INDEX_RESERVE_AT);
        assert!(r.answered.index.capacity() < STALE_PRUNE_AT);
        ask_and_answer(&mut r, INDEX_RESERVE_AT);
        assert!(r.answered.index.capacity() > STALE_PRUNE_AT);
        for i in 0..=INDEX_RESERVE_AT {
            assert!(matches!(r.lookup(&key(i)), Lookup::Answered(_)), "{i}");
        }
    }

    #[test]
    fn answered_keys_stay_within_one_window_of_ring_slots() {
        let mut r = Requests::new();
        for i in 0..3 * MAX_ANSWERED_KEYS_KEPT {
            ask_and_answer(&mut r, i);
            assert!(r.answered.ring.len() <= MAX_ANSWERED_KEYS_KEPT);
        }
        assert_eq!(r.answered.ring.len(), MAX_ANSWERED_KEYS_KEPT);
        r.answered.prune();
        assert_eq!(r.answered.index.len(), MAX_ANSWERED_KEYS_KEPT);
        assert_eq!(r.forgotten(), 2 * MAX_ANSWERED_KEYS_KEPT as u64);
        assert!(r.open.is_empty());
        assert_eq!(r.held, [MAX_ANSWERED_KEYS_KEPT, 0]);
        let first_kept = 2 * MAX_ANSWERED_KEYS_KEPT;
        assert!(r.known(&key(first_kept - 1)).is_none());
        let kept = r.known(&key(first_kept)).expect("the oldest key kept");
        assert_eq!(
            (kept.first_record, kept.last_record),
            (first_kept, first_kept)
        );
    }

    /// A forgotten key's index entry stays until a prune but never answers:
    /// the key is unknown, the key now in its slot is found, and the key
    /// asked again is a new key (a new order number) in a slot of its own.
    #[test]
    fn a_forgotten_keys_stale_index_entry_never_answers_for_it() {
        let mut r = Requests::new();
        for i in 0..=MAX_ANSWERED_KEYS_KEPT {
            ask_and_answer(&mut r, i);
        }
        assert_eq!(r.forgotten(), 1);
        assert_eq!(r.answered.index.len(), MAX_ANSWERED_KEYS_KEPT + 1);
        assert!(r.known(&key(0)).is_none());
        let last = MAX_ANSWERED_KEYS_KEPT;
        assert_eq!(r.known(&key(last)).map(|k| k.first_record), Some(last));
        r.push(key(0), "ping", 9, pending(9));
        let Lookup::Open(open) = r.lookup(&key(0)) else {
            panic!("key 0 asked again")
        };
        assert_eq!(open.info.key_seq, last as u64 + 2);
        assert!(r.take_answered(&key(0), 0).is_some());
        assert_eq!(r.known(&key(0)).map(|k| k.first_record), Some(9));
        r.answered.prune();
        assert_eq!(r.answered.index.len(), MAX_ANSWERED_KEYS_KEPT);
        assert_eq!(r.known(&key(0)).map(|k| k.first_record), Some(9));
        assert!(r.known(&key(1)).is_none(), "key 1's slot went to key 0");
    }

    /// A key asked again leaves its slot (its answer no longer stands): the
    /// answer that takes the slot later forgets nothing, and the key keeps
    /// its first request's order and record when it is answered again.
    #[test]
    fn a_key_asked_again_leaves_its_slot_and_keeps_its_first_request() {
        let mut r = Requests::new();
        ask_and_answer(&mut r, 0);
        r.push(key(0), "tools/call", 7, pending(7));
        assert_eq!(r.answered.index.len(), 0);
        assert!(r.answered.ring[0].is_none());
        for i in 1..=MAX_ANSWERED_KEYS_KEPT {
            ask_and_answer(&mut r, i);
        }
        assert_eq!(r.forgotten(), 0);
        let Lookup::Open(open) = r.lookup(&key(0)) else {
            panic!("key 0 still open")
        };
        assert_eq!(open.info.key_seq, 1);
        assert_eq!(&*open.info.first_method, "ping");
        assert_eq!((open.info.first_record, open.info.last_record), (0, 7));
        assert!(r.take_answered(&key(0), 0).is_some());
        assert_eq!(r.forgotten(), 1, "key 1's slot was taken by key 0's answer");
        assert_eq!(r.known(&key(0)).map(|k| k.last_record), Some(7));
    }
}
