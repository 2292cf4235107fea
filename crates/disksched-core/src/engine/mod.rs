//! The event engine: a heap of future events ordered by (time, priority, seq).
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
    /// (time, priority, seq) in one integer, so the heap's every comparison
    /// is one: time in the high 64 bits, then priority (8), then seq (56).
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

/// The event heap and the clock: events of type `E` pop in (time, priority, insertion order).
pub struct Engine<E> {
    now: SimTime,
    seq: u64,
    heap: BinaryHeap<Reverse<Entry<E>>>,
}

impl<E> Default for Engine<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Engine<E> {
    /// An empty engine at time zero.
    pub fn new() -> Self {
        Engine { now: SimTime::ZERO, seq: 0, heap: BinaryHeap::new() }
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
        self.heap.push(Reverse(Entry { key, event }));
    }

    /// Time of the next event, if any.
    pub fn peek(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.0.time())
    }

    /// Pop the next event and advance the clock to its time.
    pub fn step(&mut self) -> Option<(SimTime, E)> {
        let Reverse(e) = self.heap.pop()?;
        self.now = e.time();
        Some((self.now, e.event))
    }

    /// Step events through `handler` until the heap is empty or the next event is after `until`.
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
        self.heap.len()
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
