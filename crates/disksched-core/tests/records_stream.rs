//! Streamed records (`metrics::with_record_sink`): full chunks go to the sink in
//! completion order, the run keeps only the last partial chunk, and together they
//! are exactly the records of the same run kept whole.

use disksched_core::metrics::{with_record_sink, Records};
use disksched_core::{SimConfig, Simulation};
use std::cell::RefCell;
use std::rc::Rc;

const CFG: &str = r#"
seed = 5
[disk]
model = "atlas10k"
scheduler = "sptf"
[host]
queue_threshold = 8
[workload]
kind = "oltp"
[run]
requests = 1050
records = true
"#;

fn run() -> Option<Records> {
    let cfg = SimConfig::from_toml(CFG, "test.toml").unwrap();
    Simulation::new(&cfg).unwrap().run(&mut |_, _| true).unwrap().records
}

#[test]
fn streamed_chunks_are_the_whole_records_in_order() {
    let whole = run().expect("records kept");
    assert_eq!(whole.len(), 1050);
    let chunks: Rc<RefCell<Vec<Records>>> = Rc::default();
    let sink = chunks.clone();
    let last = with_record_sink(100, Box::new(move |c| sink.borrow_mut().push(c)), run).expect("records kept");
    let chunks = chunks.borrow();
    // 1050 completions: ten full chunks of 100 to the sink, 50 left in the result.
    assert_eq!(chunks.iter().map(Records::len).collect::<Vec<_>>(), vec![100; 10]);
    assert_eq!(last.len(), 50);
    let seq: Vec<u64> = chunks.iter().chain(std::iter::once(&last)).flat_map(|c| c.seq.iter().copied()).collect();
    let done: Vec<u64> = chunks.iter().chain(std::iter::once(&last)).flat_map(|c| c.done_ns.iter().copied()).collect();
    assert_eq!(seq, whole.seq);
    assert_eq!(done, whole.done_ns);
    // The sink is gone once the call returns: the next run keeps its records whole.
    assert_eq!(run().unwrap().len(), 1050);
}
