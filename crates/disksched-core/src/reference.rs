//! The run config reference: every table a config has, gathered from the
//! subsystems that declare its keys (`schema::Param`, declared beside the
//! code that reads each one). `disksched config reference` prints it
//! (docs/config.md); the loader checks values against the same declarations.

use crate::schema::{Param, Ty};
use crate::{background, config, disk::noisy, qos, sched, workload};

/// One table of a config: its path (`host`, `workload` with `kind = "open"`,
/// `host.set` under scheduler `rr`) and the keys it takes.
#[derive(Clone, Debug)]
pub struct Section {
    /// Where the table is (e.g. `host.set` under scheduler `rr`).
    pub path: String,
    /// What the table is for.
    pub help: String,
    /// The keys it takes.
    pub params: Vec<Param>,
}

fn section(path: impl Into<String>, help: impl Into<String>, params: &[Param]) -> Section {
    Section { path: path.into(), help: help.into(), params: params.to_vec() }
}

/// Every table of a run config and every key it takes, in the order of the reference.
pub fn sections() -> Vec<Section> {
    let mut s = vec![
        section("", "Top level.", config::TOP_PARAMS),
        section("disk", "The simulated drive(s).", config::DISK_PARAMS),
        section("disk.noise", "How every drive varies from its spec, in any run (optional; one random stream per disk). In external freeblock mode `[freeblock.noise]` is the drive's instead.", noisy::NOISE_PARAMS),
        section("host", "The host (device-driver) queue.", config::HOST_PARAMS),
        section("host.shaper", "Traffic shaping above the host scheduler (optional; see `disksched shaper`).", qos::SHAPER_PARAMS),
        section("host.shaper.set", "Tunables of the feedback policies.", qos::POLICY_TUNABLES),
    ];
    for class in ["real-time", "best-effort", "background"] {
        s.push(section(format!("host.shaper.{class}"), format!("Gates of the {class} pipe; 0 = no such gate."), qos::PIPE_TUNABLES));
    }
    s.push(section("controller", "A controller queue between the host queue and the disks (optional).", config::CONTROLLER_PARAMS));
    s.push(section("host.belief", "A level's belief of the drive (also `controller.belief`, `freeblock.belief`); absent: exact.", crate::disk::belief::BELIEF_PARAMS));
    s.push(section("run", "How long the run lasts and what it keeps.", config::RUN_PARAMS));
    s.push(section("reconfigure[]", "Run-time changes of a queue's scheduler (a list of tables).", config::RECONFIGURE_PARAMS));
    s.push(section("freeblock", "Freeblock scheduling of background tasks (optional).", background::FREEBLOCK_PARAMS));
    s.push(section("freeblock.noise", "External mode: how the drive differs from the host's model.", noisy::NOISE_PARAMS));
    s.push(section("freeblock.tasks[]", "Background tasks (a list of tables).", background::TASK_PARAMS));
    s.push(section("freeblock.events[]", "Tasks paused, resumed or aborted during the run (a list of tables).", background::EVENT_PARAMS));
    for (kind, help, parts) in workload::KINDS {
        let params: Vec<Param> = parts.iter().flat_map(|p| p.iter().copied()).collect();
        s.push(section(format!("workload kind={kind}"), *help, &params));
    }
    s.push(section("workload.classes[]", "`kind = \"trace\"`: class rules, first match wins.", workload::replay::CLASS_RULE_PARAMS));
    s.push(section("workload.clients[]", "`kind = \"mix\"`: each member is a workload table (any kind) plus these keys.", workload::mix::MEMBER_PARAMS));
    for info in sched::REGISTRY {
        if !info.tunables.is_empty() {
            s.push(section(format!("set scheduler={}", info.name),
                format!("Tunables of `{}` in `host.set`, `controller.set`, `disk.set` or `reconfigure[].set`.", info.name), info.tunables));
        }
    }
    s
}

/// The config reference as Markdown (docs/config.md): every table, key,
/// type, unit, default and bounds, from the declarations above.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Run config reference\n\n\
         Generated from the declarations in the code by `disksched config reference`\n\
         (do not edit by hand: `make config-reference` rewrites this file, and a test\n\
         fails when it is out of date). Every key a run config accepts is listed with\n\
         its type, unit, default and bounds; a value outside its bounds is refused with\n\
         a one-line error naming the key, the value and the bounds. Bounds marked with\n\
         `0 or` accept 0 (off) besides the interval. Some bounds also depend on the\n\
         disk (a start block must leave room for the request on it); the help says so.\n",
    );
    for sec in sections() {
        let title = match sec.path.split_once(' ') {
            Some((table, cond)) => {
                let (k, v) = cond.split_once('=').unwrap_or((cond, ""));
                if table == "set" { format!("`set` of scheduler `{v}`") } else { format!("`[{table}]` with `{k} = \"{v}\"`") }
            }
            None if sec.path.is_empty() => "top level".to_string(),
            None => format!("`[{}]`", sec.path),
        };
        out.push_str(&format!("\n## {title}\n\n{}\n\n", sec.help));
        if sec.params.is_empty() {
            out.push_str("No other keys.\n");
            continue;
        }
        out.push_str("| key | type | unit | default | bounds | meaning |\n|---|---|---|---|---|---|\n");
        for p in &sec.params {
            let ty = match p.ty {
                Ty::Int => "integer".to_string(),
                Ty::Float => "number".to_string(),
                Ty::Bool => "bool".to_string(),
                Ty::Str => "string".to_string(),
                Ty::Choice(names) => names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(" / "),
                Ty::List => "list".to_string(),
                Ty::Table => "table".to_string(),
            };
            let bounds = if p.is_numeric() { p.bounds_text() } else { String::new() };
            out.push_str(&format!("| `{}` | {ty} | {} | {} | {bounds} | {} |\n", p.name, p.unit, p.default_shown(), p.help.replace('|', "\\|")));
        }
    }
    out
}
