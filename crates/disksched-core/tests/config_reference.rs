//! The config reference is generated from the declared schema; these tests
//! hold it to the loader. The keys the loader accepts are derived from the
//! loader itself (serde's `deny_unknown_fields` error lists every field of a
//! table), not from the declarations; the bounds the reference prints are
//! checked by feeding the loader a value just outside them.
mod common;

use disksched_core::reference;
use disksched_core::schema::{Param, Ty};
use disksched_core::{SimConfig, Simulation};
use std::collections::BTreeSet;

const DISK: &str = "[disk]\nmodel = \"atlas10k\"\n";
const OLTP: &str = "[workload]\nkind = \"oltp\"\n";

/// The fields serde lists in its unknown-field error for `toml`, which has a
/// key `zz_unknown` in the table under test.
fn accepted_keys(toml: &str) -> BTreeSet<String> {
    let e = match SimConfig::from_toml(toml, "probe.toml") {
        Ok(_) => panic!("zz_unknown accepted in:\n{toml}"),
        Err(e) => e.to_string(),
    };
    let at = e.find("unknown field `zz_unknown`").unwrap_or_else(|| panic!("not an unknown-field error: {e}\n{toml}"));
    let rest = &e[at + "unknown field `zz_unknown`".len()..];
    let rest = rest.split_once("expected").map(|(_, r)| r).unwrap_or("");
    rest.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

fn section(path: &str) -> reference::Section {
    reference::sections().into_iter().find(|s| s.path == path).unwrap_or_else(|| panic!("no section {path}"))
}

fn declared(path: &str) -> BTreeSet<String> {
    section(path).params.iter().map(|p| p.name.to_string()).collect()
}

/// (reference section, a config with `zz_unknown` in that table).
fn probes() -> Vec<(String, String)> {
    let mut v = vec![
        (String::new(), format!("zz_unknown = 1\n{DISK}{OLTP}")),
        ("disk".into(), format!("{DISK}zz_unknown = 1\n{OLTP}")),
        ("host".into(), format!("{DISK}[host]\nzz_unknown = 1\n{OLTP}")),
        ("host.shaper".into(), format!("{DISK}[host.shaper]\nzz_unknown = 1\n{OLTP}")),
        ("controller".into(), format!("{DISK}[controller]\nzz_unknown = 1\n{OLTP}")),
        ("run".into(), format!("{DISK}{OLTP}[run]\nzz_unknown = 1\n")),
        ("reconfigure[]".into(), format!("{DISK}{OLTP}[[reconfigure]]\nat_ms = 1\nqueue = \"host\"\nscheduler = \"fcfs\"\nzz_unknown = 1\n")),
        ("freeblock".into(), format!("{DISK}{OLTP}[freeblock]\nzz_unknown = 1\n")),
        ("freeblock.noise".into(), format!("{DISK}{OLTP}[freeblock.noise]\nzz_unknown = 1\n")),
        ("disk.noise".into(), format!("{DISK}[disk.noise]\nzz_unknown = 1\n{OLTP}")),
        ("host.belief".into(), format!("{DISK}[host.belief]\nzz_unknown = 1\n{OLTP}")),
        ("freeblock.tasks[]".into(), format!("{DISK}{OLTP}[[freeblock.tasks]]\nzz_unknown = 1\n")),
        ("workload.classes[]".into(), format!("{DISK}[workload]\nkind = \"trace\"\npath = \"x\"\n[[workload.classes]]\nclass = \"real-time\"\nzz_unknown = 1\n")),
    ];
    // Kinds whose table flattens `RandomIo` check required fields before unknown ones: give them.
    let required = |kind: &str| match kind {
        "open" => "interarrival_ms = 10",
        "closed" => "clients = 2",
        "local" => "mean_distance_kb = 4",
        "hotcold" => "hot_fraction = 0.2\nhot_access_fraction = 0.8",
        "onoff" => "on_rate_per_s = 1\nmean_on_ms = 1\nmean_off_ms = 1",
        "schedule" => "rates = [[0, 1]]",
        _ => "",
    };
    for s in reference::sections() {
        if let Some(kind) = s.path.strip_prefix("workload kind=") {
            v.push((s.path.clone(), format!("{DISK}[workload]\nkind = \"{kind}\"\n{}\nzz_unknown = 1\n", required(kind))));
        }
    }
    v
}

#[test]
fn the_reference_lists_exactly_the_keys_the_loader_accepts() {
    let probes = probes();
    // Every workload kind the loader knows has a section: serde lists the variants.
    let kinds = {
        let e = SimConfig::from_toml(&format!("{DISK}[workload]\nkind = \"zz_unknown\"\n"), "probe.toml").unwrap_err().to_string();
        let rest = e.split_once("expected").expect("variants listed").1.to_string();
        rest.split('`').skip(1).step_by(2).map(str::to_string).collect::<BTreeSet<_>>()
    };
    assert!(kinds.len() >= 15, "{kinds:?}");
    for k in &kinds {
        assert!(probes.iter().any(|(p, _)| p == &format!("workload kind={k}")), "workload kind {k} is missing from the reference");
    }
    for (path, toml) in &probes {
        let mut accepted = accepted_keys(toml);
        if accepted.is_empty() && path.starts_with("workload kind=") && path != "workload kind=oltp" {
            // serde's error for a table that flattens another lists no fields:
            // take the fields the parsed table serializes (every field, defaults filled in).
            let cfg = SimConfig::from_toml(&toml.replace("zz_unknown = 1\n", ""), "probe.toml").expect("the probe parses without zz_unknown");
            let json = serde_json::to_value(&cfg.workload).unwrap();
            accepted = json.as_object().unwrap().keys().cloned().collect();
        }
        // `oltp` takes no fields: serde says "there are no fields".
        if path != "workload kind=oltp" {
            assert!(!accepted.is_empty(), "{path}: no keys derived from the loader");
        }
        let mut accepted = accepted;
        // The tag of an internally tagged enum (a workload's `kind`) is taken before the variant's fields are.
        if path.starts_with("workload") {
            accepted.remove("kind");
        }
        assert_eq!(declared(path), accepted, "section [{path}]: declared (left) vs accepted by the loader (right)");
    }
}

#[test]
fn scheduler_and_shaper_tunables_are_listed_from_their_declarations() {
    for info in disksched_core::sched::REGISTRY {
        let listed: BTreeSet<String> = if info.tunables.is_empty() {
            BTreeSet::new()
        } else {
            declared(&format!("set scheduler={}", info.name))
        };
        // What the loader accepts: its error for an unknown tunable lists them.
        let e = disksched_core::sched::build(info.name, &[("zz_unknown".into(), 1.0)]).err().expect("refused").to_string();
        let list = e.split_once("expected one of: ").expect("a list").1.trim_end_matches(')');
        let accepted: BTreeSet<String> = if list == "none" { BTreeSet::new() } else { list.split(", ").map(str::to_string).collect() };
        assert_eq!(listed, accepted, "scheduler {}", info.name);
    }
    for class in ["real-time", "best-effort", "background"] {
        assert!(declared(&format!("host.shaper.{class}")).contains("wiops"));
    }
    assert!(declared("host.shaper.set").contains("cut_factor"));
}

#[test]
fn every_declared_default_lies_within_its_bounds() {
    for s in reference::sections() {
        for p in &s.params {
            if p.is_numeric() && !p.default.is_nan() {
                assert!(p.allows(p.default), "[{}] {} default {} outside {}", s.path, p.name, p.default, p.bounds_text());
            }
            if !p.is_numeric() {
                assert!(p.unit.is_empty(), "[{}] {}", s.path, p.name);
            }
        }
    }
}

#[test]
fn the_committed_docs_config_md_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == reference::reference_markdown(),
        "docs/config.md is stale: run `make config-reference` (or `disksched config reference > docs/config.md`)");
}

/// A value just outside `p`'s bounds (above the maximum, or below the minimum).
fn outside(p: &Param) -> Vec<f64> {
    let mut v = vec![p.max * 2.0 + 1.0];
    if p.max.is_finite() && p.max > 0.0 && p.max < 1e15 {
        v[0] = if p.ty == Ty::Int { p.max + 1.0 } else { p.max * 1.5 };
    }
    if p.or_zero {
        v.push(p.min / 2.0);
    } else if p.min_open {
        v.push(p.min);
    } else if p.min > 0.0 {
        v.push(if p.ty == Ty::Int { p.min - 1.0 } else { p.min / 2.0 });
    } else if p.min < 0.0 {
        v.push(p.min * 1.5);
    } else {
        v.push(-1.0);
    }
    v
}

fn value(p: &Param, v: f64) -> String {
    if p.ty == Ty::Int { format!("{}", v as i128) } else { format!("{v:e}") }
}

/// Refused naming the key, or (a negative or oversized integer) by the TOML
/// type itself at the key's line.
fn refused_naming(e: &str, key: &str) -> bool {
    (e.contains(key) || e.contains("invalid value") || e.contains("number too large")) && !e.contains('\n')
}

/// Each workload kind's numeric keys, and the host/controller/run/freeblock
/// ones: a value just outside the declared bounds is refused by the loader
/// with an error naming the key; the declared default is accepted.
#[test]
fn the_loader_refuses_values_outside_the_declared_bounds() {
    // A minimal valid body for each table, in which one key at a time is set.
    let bodies: &[(&str, &str, &str)] = &[
        ("workload kind=open", "workload", "kind = \"open\"\ninterarrival_ms = 10"),
        ("workload kind=closed", "workload", "kind = \"closed\"\nclients = 2"),
        ("workload kind=sequential", "workload", "kind = \"sequential\"\nrequest_kb = 4"),
        ("workload kind=strided", "workload", "kind = \"strided\"\nrequest_kb = 4\nstride_kb = 64"),
        ("workload kind=local", "workload", "kind = \"local\"\nmean_distance_kb = 64"),
        ("workload kind=hotcold", "workload", "kind = \"hotcold\"\nhot_fraction = 0.2\nhot_access_fraction = 0.8"),
        ("workload kind=onoff", "workload", "kind = \"onoff\"\non_rate_per_s = 100\nmean_on_ms = 10\nmean_off_ms = 10"),
        ("workload kind=dd", "workload", "kind = \"dd\"\nrequest_kb = 64"),
        ("workload kind=stream", "workload", "kind = \"stream\"\nmb_per_s = 1\nrequest_kb = 64"),
        ("workload kind=range-writes", "workload", "kind = \"range-writes\"\noutstanding = 2"),
        ("workload kind=range-alloc", "workload", "kind = \"range-alloc\"\noutstanding = 2"),
    ];
    let mut checked = 0;
    let model = common::atlas();
    let run_cfg = |text: &str| -> Result<(), String> {
        let cfg = SimConfig::from_toml(text, "bounds.toml").map_err(|e| e.to_string())?;
        Simulation::with_model(&cfg, model.clone()).map(drop).map_err(|e| e.to_string())
    };
    for (path, _, body) in bodies {
        let sec = section(path);
        run_cfg(&format!("{DISK}[workload]\n{body}\n")).unwrap_or_else(|e| panic!("{path}: base config refused: {e}"));
        for p in sec.params.iter().filter(|p| p.is_numeric()) {
            // Keys whose bound depends on another key or the disk are checked with it elsewhere.
            if body.contains(&format!("{} =", p.name)) && !["clients", "outstanding", "request_kb", "mb_per_s"].contains(&p.name) {
                continue;
            }
            for v in outside(p) {
                let body = body.lines().filter(|l| !l.starts_with(&format!("{} =", p.name))).collect::<Vec<_>>().join("\n");
                let text = format!("{DISK}[workload]\n{body}\n{} = {}\n", p.name, value(p, v));
                let e = run_cfg(&text).err().unwrap_or_else(|| panic!("{path}: {} = {} accepted", p.name, value(p, v)));
                assert!(refused_naming(&e, &format!("workload.{}", p.name)), "{path}: {} = {}: {e}", p.name, value(p, v));
                checked += 1;
            }
        }
    }
    let tables: &[(&str, &str, &str)] = &[
        ("disk", "", ""),
        ("host", "[host]\n", ""),
        ("controller", "[controller]\n", ""),
        ("run", "[run]\nrequests = 100\n", ""),
        ("freeblock", "[freeblock]\n", ""),
        ("freeblock.noise", "[freeblock]\nmode = \"external\"\nidle = false\n[freeblock.noise]\n", "[host]\nqueue_threshold = 2\n"),
        ("disk.noise", "[disk.noise]\n", ""),
        ("host.belief", "[host.belief]\n", ""),
    ];
    for (path, table, extra) in tables {
        for p in section(path).params.iter().filter(|p| p.is_numeric()) {
            for v in outside(p) {
                if *path == "run" && p.name == "requests" {
                    continue; // given in the table; checked in runs.rs
                }
                let line = format!("{} = {}\n", p.name, value(p, v));
                let text = if *path == "disk" { format!("{DISK}{line}{OLTP}") } else { format!("{DISK}{extra}{OLTP}{table}{line}") };
                let e = run_cfg(&text).err().unwrap_or_else(|| panic!("{path}: {} = {} accepted", p.name, value(p, v)));
                assert!(refused_naming(&e, &format!("{path}.{}", p.name)), "{path}: {} = {}: {e}", p.name, value(p, v));
                checked += 1;
            }
        }
    }
    assert!(checked >= 80, "{checked}");
}

#[test]
fn a_tiny_positive_io_max_rate_is_refused_and_zero_still_means_no_gate() {
    // External freeblock with a best-effort wiops of 1e-308 used to hang: the
    // foreground waited past the end of the clock while background commands ran on.
    let base = "[disk]\nmodel = \"atlas10k\"\n[host]\nqueue_threshold = 2\n[workload]\nkind = \"oltp\"\n[run]\nrequests = 200\n\
                [freeblock]\nmode = \"external\"\nidle = false\n";
    let shaped = |gate: &str| format!("{base}[host.shaper]\nbest-effort = {{ {gate} }}\n");
    let run = |text: &str| {
        let cfg = SimConfig::from_toml(text, "wiops.toml").unwrap();
        Simulation::with_model(&cfg, common::atlas()).and_then(|s| s.run(&mut |_, _| true))
    };
    for gate in ["wiops = 1e-308", "riops = 1e-9", "rbps = 1e-5", "rate_per_s = 1e-300", "rate_kb_per_s = 5e-324"] {
        let e = run(&shaped(gate)).err().expect("refused").to_string();
        let key = gate.split(' ').next().unwrap();
        assert!(e.starts_with(&format!("host.shaper.best-effort.{key}: ")) && e.contains("out of range 0 or [0.001, "), "{gate}: {e}");
    }
    // 0 is no gate: the run is the unshaped one.
    let unshaped = run(base).unwrap();
    let zero = run(&shaped("wiops = 0")).unwrap();
    assert_eq!(serde_json::to_string(&unshaped.summary).unwrap(), serde_json::to_string(&zero.summary).unwrap());
    // The smallest rate allowed ends (a run of 200 requests, writes one per 1000 s).
    let slow = run(&shaped("wiops = 0.001")).unwrap();
    assert_eq!(slow.counters.completed, 200);
}
