//! The event engine: future events ordered by (time, priority, seq).
//!
//! Four verbs, as in SimPy's `core.py`: `schedule` an event, `peek` at the time
//! of the next one, `step` to pop it (advancing the clock), `run` until a limit.
//! Ties are broken first by `priority` (lower fires first) and then by the
//! order of scheduling (`seq`), so a run is fully determined by its inputs.

use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug)]
struct Entry<E> {
    /// (time, priority, seq) in one integer, so every comparison is one:
    /// time in the high 64 bits, then priority (8), then seq (56).
    key: u128,
    event: E,
}

/// Seqs fit the key's 56 bits: a run schedules far fewer events (2^56 is
/// over two years at a billion events a second).
const SEQ_BITS: u32 = 56;

impl<E> Entry<E> {
    fn time(&self) -> SimTime {
        SimTime((self.key >> 64) as u64)
    }
}
impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// Events `near` holds at most: beyond, its latest go to `far`.
const NEAR_MAX: usize = 64;

/// The event queue and the clock: events of type `E` pop in (time, priority, insertion order).
pub struct Engine<E> {
    now: SimTime,
    seq: u64,
    /// The earliest pending events, sorted by key, the next last: a run's
    /// usual handful (an arrival, a completion, a wake-up), where inserting
    /// in order costs less than a binary heap's sifting.
    near: Vec<Entry<E>>,
    /// The rest (a closed loop of many thinking clients), every key after
    /// each of `near`'s; `near` refills from it when it empties.
    far: BinaryHeap<Reverse<Entry<E>>>,
    /// `far`'s least key (`u128::MAX` when it is empty): one comparison sends an event there.
    far_least: u128,
}

impl<E> Default for Engine<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Engine<E> {
    /// An empty engine at time zero.
    pub fn new() -> Self {
        Engine { now: SimTime::ZERO, seq: 0, near: Vec::new(), far: BinaryHeap::new(), far_least: u128::MAX }
    }

    /// Current simulated time: the time of the last event stepped.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedule `event` at `at` (never in the past). Lower `priority` fires first among equal times.
    #[inline]
    pub fn schedule(&mut self, at: SimTime, priority: u8, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let at = at.max(self.now);
        self.seq += 1;
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let key = (at.0 as u128) << 64 | (priority as u128) << SEQ_BITS | self.seq as u128;
        if key > self.far_least {
            self.far.push(Reverse(Entry { key, event }));
            return;
        }
        let i = self.near.partition_point(|e| e.key > key);
        self.near.insert(i, Entry { key, event });
        if self.near.len() > NEAR_MAX {
            self.spill();
        }
    }

    /// `near`'s latest event to `far`.
    #[cold]
    #[inline(never)]
    fn spill(&mut self) {
        let latest = self.near.remove(0);
        self.far_least = latest.key;
        self.far.push(Reverse(latest));
    }

    /// Time of the next event, if any.
    pub fn peek(&self) -> Option<SimTime> {
        self.near.last().or(self.far.peek().map(|Reverse(e)| e)).map(Entry::time)
    }

    /// Pop the next event and advance the clock to its time.
    pub fn step(&mut self) -> Option<(SimTime, E)> {
        let e = match self.near.pop() {
            Some(e) => e,
            None => self.refill()?,
        };
        self.now = e.time();
        Some((self.now, e.event))
    }

    /// `near` is empty: the next event, and the earliest half of `NEAR_MAX` after it from `far` to `near`.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) -> Option<Entry<E>> {
        let far = &mut self.far;
        self.near.extend(std::iter::from_fn(|| far.pop().map(|Reverse(e)| e)).take(NEAR_MAX / 2));
        self.near.reverse();
        self.far_least = far.peek().map_or(u128::MAX, |Reverse(e)| e.key);
        self.near.pop()
    }

    /// Step events through `handler` until none is pending or the next event is after `until`.
    pub fn run(&mut self, until: Option<SimTime>, mut handler: impl FnMut(&mut Self, SimTime, E)) {
        while let Some(t) = self.peek() {
            if until.is_some_and(|u| t > u) {
                break;
            }
            let (t, ev) = self.step().expect("peeked");
            handler(self, t, ev);
        }
    }

    /// Move the clock to `t` (no earlier than now) without an event: a run
    /// driven from outside has reached `t` with nothing due before it.
    pub fn advance_to(&mut self, t: SimTime) {
        debug_assert!(self.peek().is_none_or(|next| next >= t), "advancing past a pending event");
        self.now = self.now.max(t);
    }

    /// Number of events scheduled and not yet popped.
    pub fn pending(&self) -> usize {
        self.near.len() + self.far.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_priority_then_insertion_order() {
        let mut e = Engine::new();
        e.schedule(SimTime(10), 1, "b1");
        e.schedule(SimTime(10), 0, "a");
        e.schedule(SimTime(5), 9, "first");
        e.schedule(SimTime(10), 1, "b2");
        let mut order = vec![];
        e.run(None, |_, _, ev| order.push(ev));
        assert_eq!(order, vec!["first", "a", "b1", "b2"]);
        assert_eq!(e.now(), SimTime(10));
    }

    /// Far more events pending than `near` holds (a closed loop of many
    /// thinking clients), scheduled and stepped in turns: each pops as the
    /// least (time, priority, order scheduled) pending then, as a sorted set
    /// of them says.
    #[test]
    fn many_pending_events_pop_in_order_through_near_and_far() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut e = Engine::new();
        let mut pending = std::collections::BTreeSet::new();
        let (mut scheduled, mut most) = (0usize, 0);
        // First by hand: times 100 down to 1 leave 1-64 near and 65-100 far; one step; then 80 must
        // go far, and pop after 65.
        for t in (1..=100).rev().chain([0, 80]) {
            if t == 0 {
                assert_eq!(e.step(), Some((SimTime(1), (0, 99))));
                pending.pop_first();
                continue;
            }
            pending.insert((t, 0, scheduled));
            e.schedule(SimTime(t), 0, (0, scheduled));
            scheduled += 1;
        }
        // (long turns fill `far`; short ones schedule among its events while `near` is not full)
        for round in 0..2000 {
            let n = if round % 40 == 0 { 40 * NEAR_MAX } else { 4 };
            for _ in 0..rng.gen_range(0..n) {
                let (t, p) = (e.now().0 + rng.gen_range(0..1000), rng.gen_range(0..3u8));
                pending.insert((t, p, scheduled));
                e.schedule(SimTime(t), p, (p, scheduled));
                scheduled += 1;
            }
            most = most.max(e.pending());
            for _ in 0..rng.gen_range(0..if n == 4 { 6 } else { n * 3 / 4 }) {
                let Some((t, (p, i))) = e.step() else { break };
                assert_eq!(Some((t.0, p, i)), pending.pop_first());
            }
            assert_eq!(e.pending(), pending.len());
        }
        while let Some((t, (p, i))) = e.step() {
            assert_eq!(Some((t.0, p, i)), pending.pop_first());
        }
        assert!(pending.is_empty() && most > 10 * NEAR_MAX, "{most}");
    }

    #[test]
    fn run_stops_at_limit_and_handler_can_schedule() {
        let mut e = Engine::new();
        e.schedule(SimTime(1), 0, 1u32);
        let mut seen = vec![];
        e.run(Some(SimTime(100)), |eng, t, ev| {
            seen.push((t.0, ev));
            eng.schedule(SimTime(t.0 * 3), 0, ev + 1);
        });
        assert_eq!(seen, vec![(1, 1), (3, 2), (9, 3), (27, 4), (81, 5)]);
        assert_eq!(e.peek(), Some(SimTime(243)));
    }
}
