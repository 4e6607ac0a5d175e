//! The encoders reproduce, dword for dword, the command streams tinygrad 0.10.1 built
//! (`golden/tinygrad-0.10.1-streams.json`, captured on its mock GPU for gfx1100).
//!
//! Each case is rebuilt twice: from the concrete addresses of the capture run, and,
//! where the capture gives them, from its fixed synthetic inputs. Where the capture
//! marks which dwords depend on runtime values, the patch offsets our encoders report
//! must name exactly those dwords.
//!
//! Intended differences: none in these cases. (On gfx10.3, which the capture does not
//! cover, `Dispatch` leaves out COMPUTE_STATIC_THREAD_MGMT_SE4..7: that offset is
//! COMPUTE_RELAUNCH there. See `pm4::recipes`.)

use std::collections::{BTreeSet, HashMap};

use amd_packets::pm4::recipes::{self, Dispatch, Signal};
use amd_packets::pm4::{DispatchInitiator, IndirectBuffer, ReleaseMem, WaitRegMem};
use amd_packets::sdma::{CopyLinear, Fence, PollRegmem, Timestamp, Trap};
use amd_packets::{GfxTarget, lo_hi};
use serde_json::Value;

const T: GfxTarget = GfxTarget::Gfx11;

fn golden() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../golden/tinygrad-0.10.1-streams.json");
    let text = std::fs::read_to_string(path).expect("golden file is part of the repository");
    serde_json::from_str(&text).expect("golden file is JSON")
}

/// A number written either as a JSON integer or as a "0x…" string.
fn num(v: &Value) -> u64 {
    match v {
        Value::Number(n) => n.as_u64().expect("non-negative integer"),
        Value::String(s) => {
            u64::from_str_radix(s.trim_start_matches("0x"), if s.starts_with("0x") { 16 } else { 10 }).expect("number")
        }
        other => panic!("not a number: {other}"),
    }
}

fn dwords(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("dword list")
        .iter()
        .map(|d| num(d) as u32)
        .collect()
}

type Vars = HashMap<String, u64>;

fn var(vars: &Vars, name: &str) -> u64 {
    *vars.get(name).unwrap_or_else(|| panic!("missing input {name}"))
}

/// Maps a case's concrete inputs onto the variable names its synthetic form uses.
fn concrete_vars(case: &Value, exec_inputs: &Value) -> Vars {
    let inputs = &case["inputs"];
    let mut vars = Vars::new();
    let mut put = |name: &str, v: u64| {
        vars.insert(name.to_string(), v);
    };
    let name = case["name"].as_str().unwrap_or_default();
    let timeline = name.ends_with("signal_timeline");
    if let Some(v) = inputs.get("sig.value_addr") {
        put(if timeline { "tl_sig_base" } else { "sig_base" }, num(v));
    }
    if let Some(v) = inputs.get("sig.timestamp_addr") {
        put("sig_base", num(v) - 8);
    }
    if let Some(v) = inputs.get("timeline.value_addr") {
        put("tl_sig_base", num(v));
    }
    if let Some(v) = inputs.get("queue_event_mailbox_ptr") {
        put("queue_event_mailbox_ptr", num(v));
    }
    if let Some(v) = inputs.get("queue_event.event_id") {
        put("queue_event_id", num(v));
    }
    for k in ["dst", "src", "size", "value", "len", "hw_page.va_addr"] {
        if let Some(v) = inputs.get(k) {
            put(k, num(v));
        }
    }
    if name == "compute.exec" || name == "compute.launch_sequence" {
        let e = exec_inputs;
        for k in ["prog_addr", "kernargs_ptr", "rsrc1", "rsrc2", "tmpring_size"] {
            put(k, num(&e[k]));
        }
        put("scratch_va", num(&e["scratch.va_addr"]));
        for i in 0..3 {
            put(&format!("global_{i}"), num(&e["global_size"][i]));
            put(&format!("local_{i}"), num(&e["local_size"][i]));
        }
    }
    vars
}

/// Builds a case with our encoders; returns the stream, the packet sizes (SDMA cases)
/// and the dword indices our patch offsets name.
fn build(name: &str, vars: &Vars) -> (Vec<u32>, Vec<usize>, BTreeSet<usize>) {
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    let mut patch = BTreeSet::new();
    let value = |default: u64| vars.get("value").copied().unwrap_or(default);
    let mut mark = |at: usize, n: usize| patch.extend(at..at + n);
    let exec = |out: &mut Vec<u32>, mark: &mut dyn FnMut(usize, usize)| {
        let kernargs = lo_hi(var(vars, "kernargs_ptr"));
        let d = Dispatch {
            code_addr: var(vars, "prog_addr"),
            rsrc1: var(vars, "rsrc1") as u32,
            rsrc2: var(vars, "rsrc2") as u32,
            rsrc3: 0,
            tmpring_size: var(vars, "tmpring_size") as u32,
            scratch_base: var(vars, "scratch_va"),
            user_data: &kernargs,
            block: [0, 1, 2].map(|i| var(vars, &format!("local_{i}")) as u32),
            grid: [0, 1, 2].map(|i| var(vars, &format!("global_{i}")) as u32),
            initiator: DispatchInitiator::DEFAULT,
        };
        let o = d.encode(T, out).expect("dispatch encodes");
        mark(o.code_addr, 2);
        mark(o.rsrc, 2);
        mark(o.tmpring_size, 1);
        mark(o.scratch_base.expect("gfx11 writes the scratch base"), 2);
        mark(o.user_data, 2);
        mark(o.block, 3);
        mark(o.grid, 3);
    };
    let timeline_signal = |out: &mut Vec<u32>, mark: &mut dyn FnMut(usize, usize), v: u64| {
        let (mailbox, id) = (var(vars, "queue_event_mailbox_ptr"), var(vars, "queue_event_id") as u32);
        let before = out.len();
        let o = Signal {
            address: var(vars, "tl_sig_base"),
            value: v,
            event: Some((mailbox, id)),
        }
        .encode(T, out);
        mark(o.address, 2);
        // The mailbox write: its address, its data (the event id, lo and hi) and the
        // interrupt context id.
        let second = before + ReleaseMem::DWORDS;
        mark(second + 3, 2);
        mark(second + 5, 2);
        mark(second + 7, 1);
    };
    match name {
        "compute.wait" => {
            let at = WaitRegMem::memory_ge(var(vars, "sig_base"), value(5) as u32).encode(T, &mut out);
            mark(at + 2, 2);
        }
        "compute.signal" => {
            let o = Signal {
                address: var(vars, "sig_base"),
                value: value(7),
                event: None,
            }
            .encode(T, &mut out);
            mark(o.address, 2);
        }
        "compute.signal_timeline" => timeline_signal(&mut out, &mut mark, value(7)),
        "compute.timestamp" => {
            let at = ReleaseMem::timestamp(var(vars, "sig_base") + 8).encode(T, &mut out);
            mark(at + 3, 2);
        }
        "compute.memory_barrier" => {
            recipes::memory_barrier(T, &mut out);
        }
        "compute.exec" => exec(&mut out, &mut mark),
        "compute.launch_sequence" => {
            let at = WaitRegMem::memory_ge(var(vars, "tl_sig_base"), 5).encode(T, &mut out);
            mark(at + 2, 2);
            recipes::memory_barrier(T, &mut out);
            exec(&mut out, &mut mark);
            timeline_signal(&mut out, &mut mark, 7);
        }
        "compute.bind" => {
            let ib = IndirectBuffer::new(var(vars, "hw_page.va_addr"), var(vars, "len") as u32).expect("valid IB");
            ib.encode(T, &mut out);
            mark(1, 3);
        }
        n if n.starts_with("copy.copy_") => {
            let (dst, src) = (var(vars, "dst"), var(vars, "src"));
            let size = match vars.get("size") {
                Some(&s) => s,
                None => u64::from_str_radix(&n["copy.copy_0x".len()..], 16).expect("size in the case name"),
            };
            for (i, p) in CopyLinear::split(dst, src, size).expect("split").enumerate() {
                let at = p.encode(T, &mut out);
                sizes.push(CopyLinear::DWORDS);
                assert_eq!(
                    (p.src(), p.dst()),
                    (src + (i as u64) * 0x40_0000, dst + (i as u64) * 0x40_0000)
                );
                mark(at + 3, 4);
            }
        }
        "copy.signal" => {
            Fence::new(var(vars, "sig_base"), value(7) as u32).encode(T, &mut out);
            sizes.push(Fence::DWORDS);
            mark(1, 2);
        }
        "copy.signal_timeline" => {
            let (mailbox, id) = (var(vars, "queue_event_mailbox_ptr"), var(vars, "queue_event_id") as u32);
            Fence::new(var(vars, "tl_sig_base"), value(7) as u32).encode(T, &mut out);
            Fence::new(mailbox, id).encode(T, &mut out);
            Trap::new(id).expect("event ids fit 28 bits").encode(T, &mut out);
            sizes.extend([Fence::DWORDS, Fence::DWORDS, Trap::DWORDS]);
            mark(1, 2);
            mark(5, 3);
            mark(9, 1);
        }
        "copy.wait" => {
            PollRegmem::memory_ge(var(vars, "sig_base"), value(5) as u32).encode(T, &mut out);
            sizes.push(PollRegmem::DWORDS);
            mark(1, 2);
        }
        "copy.timestamp" => {
            Timestamp::new(var(vars, "sig_base") + 8)
                .expect("aligned")
                .encode(T, &mut out);
            sizes.push(Timestamp::DWORDS);
            mark(1, 2);
        }
        other => panic!("golden case {other} has no builder here: add one"),
    }
    (out, sizes, patch)
}

fn hex(v: &[u32]) -> Vec<String> {
    v.iter().map(|d| format!("{d:#010x}")).collect()
}

#[test]
fn encoders_match_tinygrad_streams() {
    let g = golden();
    let cases = g["cases"].as_array().expect("cases");
    assert!(cases.len() >= 17, "golden file lost cases");
    let exec_inputs = cases
        .iter()
        .find(|c| c["name"] == "compute.exec")
        .map(|c| c["inputs"].clone())
        .expect("compute.exec case");
    let wait_sig = cases
        .iter()
        .find(|c| c["name"] == "compute.wait")
        .map(|c| num(&c["inputs"]["sig.value_addr"]));

    for case in cases {
        let name = case["name"].as_str().expect("name");
        let vars = concrete_vars(case, &exec_inputs);
        let (ours, sizes, patch) = build(name, &vars);
        let want = dwords(&case["dwords"]);
        assert_eq!(hex(&ours), hex(&want), "{name}: concrete stream differs");
        if let Some(n) = case.get("ndwords") {
            assert_eq!(ours.len() as u64, num(n), "{name}: length");
        }
        if let Some(s) = case.get("internal_cmd_sizes") {
            let want: Vec<usize> = s.as_array().expect("sizes").iter().map(|v| num(v) as usize).collect();
            assert_eq!(sizes, want, "{name}: packet sizes");
        }
        if let Some(dep) = case.get("runtime_dependent_dwords").and_then(Value::as_object) {
            let want: BTreeSet<usize> = dep.keys().map(|k| k.parse().expect("index")).collect();
            assert_eq!(
                patch, want,
                "{name}: patch offsets must name exactly the runtime-dependent dwords"
            );
        }
        if let Some(syn) = case.get("synthetic") {
            let vars: Vars = syn["var_vals"]
                .as_object()
                .expect("var_vals")
                .iter()
                .map(|(k, v)| (k.clone(), num(v)))
                .collect();
            let (ours, _, _) = build(name, &vars);
            assert_eq!(
                hex(&ours),
                hex(&dwords(&syn["dwords"])),
                "{name}: synthetic stream differs"
            );
        }
        if name == "compute.bind" {
            // The bound IB holds wait(sig, 5) + signal(sig, 7).
            let sig = wait_sig.expect("compute.wait gives the signal address");
            let mut ib = Vec::new();
            WaitRegMem::memory_ge(sig, 5).encode(T, &mut ib);
            Signal {
                address: sig,
                value: 7,
                event: None,
            }
            .encode(T, &mut ib);
            assert_eq!(
                hex(&ib),
                hex(&dwords(&case["ib_contents"])),
                "compute.bind: IB contents"
            );
        }
    }
}

#[test]
fn golden_streams_decode_and_reencode() {
    let g = golden();
    for case in g["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().expect("name");
        let words = dwords(&case["dwords"]);
        let mut again = Vec::new();
        if name.starts_with("copy.") {
            for item in amd_packets::sdma::decode(T, &words) {
                item.unwrap_or_else(|e| panic!("{name}: {e}")).1.encode(T, &mut again);
            }
        } else {
            for item in amd_packets::pm4::decode(T, &words) {
                item.unwrap_or_else(|e| panic!("{name}: {e}")).1.encode(T, &mut again);
            }
        }
        assert_eq!(again, words, "{name}: decode → encode is not the identity");
    }
}
