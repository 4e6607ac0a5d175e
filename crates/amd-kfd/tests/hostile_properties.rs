//! Hostile sysfs `properties` on the mock: every numeric field amd-kfd reads, at the
//! largest values and at the first value whose arithmetic overflows, gives an error
//! naming the value and the file (or a device that works), never a panic or a
//! wrapped size. Run in the debug build, where overflow would panic.

use std::path::Path;
use std::sync::Arc;

use amd_kfd::topology::{NodeProperties, Visibility};
use amd_kfd::{CwsrSizes, Kfd, KfdError, QueueKind};
use amd_mockgpu::{GpuProfile, MockConfig, MockSys};

/// Every `properties` key amd-kfd parses into [`NodeProperties`], the
/// [`REQUIRED`] ones first.
const FIELDS: &[&str] = &[
    "gfx_target_version",
    "simd_count",
    "simd_per_cu",
    "max_waves_per_simd",
    "lds_size_in_kb",
    "max_slots_scratch_cu",
    "array_count",
    "simd_arrays_per_engine",
    "drm_render_minor",
    "cu_per_simd_array",
    "wave_front_size",
    "num_sdma_engines",
    "num_sdma_xgmi_engines",
    "num_sdma_queues_per_engine",
    "num_cp_queues",
    "num_xcc",
    "vendor_id",
    "device_id",
    "location_id",
    "domain",
    "max_engine_clk_fcompute",
    "unique_id",
];

/// How many of [`FIELDS`], from the first, a `properties` file must have.
const REQUIRED: usize = 9;

/// The properties file of the first GPU node on the mock (node 0 is the CPU).
const PROPS: &str = "/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties";

/// Opens the mock with `profile`, then its device, a compute and an SDMA queue:
/// the first error, or `Ok` if everything opened.
fn open_all(profile: GpuProfile) -> Result<(), KfdError> {
    let m = Arc::new(MockSys::new(MockConfig {
        gpus: vec![profile],
        ..MockConfig::default()
    }));
    let kfd = Kfd::open_with(m, &Visibility::all())?;
    let dev = kfd.device(0)?;
    let _c = dev.create_queue(QueueKind::Compute, 0x1000)?;
    let _s = dev.create_queue(QueueKind::Sdma, 0x1000)?;
    Ok(())
}

/// The mock's gfx1100 with `key` set to `value`, both in what its driver knows and in
/// the `properties` file (whose `drm_render_minor` the mock otherwise fills in).
fn open_with_prop(key: &str, value: u64) -> Result<(), KfdError> {
    let profile = GpuProfile::gfx1100().with_prop(key, value);
    let text = profile.properties_text(128);
    let text = match key {
        "drm_render_minor" => text.replace("drm_render_minor 128", &format!("drm_render_minor {value}")),
        _ => text,
    };
    open_all(profile.with_properties_text(text))
}

#[test]
fn every_field_at_its_largest_values_gives_an_error_or_a_device() {
    for &key in FIELDS {
        for value in [u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
            let r = open_with_prop(key, value);
            let wide = value > u32::MAX as u64;
            if wide && key != "unique_id" {
                let e = r.expect_err(key).to_string();
                assert!(e.starts_with(PROPS), "{key} {value}: {e}");
                assert!(e.contains(&format!("{key} {value} does not fit 32 bits")), "{e}");
            }
            // Narrow values either work (identifiers, counts amd-kfd only reports)
            // or fail with an error: the checks below pin the ones that must.
        }
    }
    // Those whose u32::MAX must be refused, and why.
    for (key, why) in [
        (
            "simd_count",
            "simd_count 4294967295 / simd_per_cu 2 / num_xcc 1 = 2147483647 CUs: × 32 waves",
        ),
        (
            "max_waves_per_simd",
            "max_waves_per_simd 4294967295 × simd_per_cu 2 overflows 32 bits",
        ),
        (
            "lds_size_in_kb",
            "lds_size_in_kb 4294967295 × 1024 bytes overflows 32 bits",
        ),
        ("gfx_target_version", "is not supported"),
        (
            "simd_per_cu",
            "max_waves_per_simd 16 × simd_per_cu 4294967295 overflows",
        ),
        ("num_xcc", "has no compute units"),
        ("drm_render_minor", "renderD4294967295"),
    ] {
        let e = open_with_prop(key, u32::MAX as u64).expect_err(key).to_string();
        assert!(e.contains(why), "{key}: {e}");
    }
    // unique_id is 64 bits and only reported.
    open_with_prop("unique_id", u64::MAX).unwrap();
}

#[test]
fn values_just_past_the_overflow_are_refused_and_just_below_work() {
    // LDS: 2^22 KiB is 2^32 bytes.
    open_with_prop("lds_size_in_kb", (1 << 22) - 1).unwrap();
    let e = open_with_prop("lds_size_in_kb", 1 << 22).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("{PROPS}: lds_size_in_kb 4194304 × 1024 bytes overflows 32 bits")
    );

    // Wave slots per CU: 2^31 × 2 SIMDs.
    open_with_prop("max_waves_per_simd", (1 << 31) - 1).unwrap();
    let e = open_with_prop("max_waves_per_simd", 1 << 31).unwrap_err().to_string();
    assert!(
        e.contains("max_waves_per_simd 2147483648 × simd_per_cu 2 overflows"),
        "{e}"
    );

    // Context save on gfx11: 8935 CUs fit 32 bits, 8936 do not (the allocation of
    // control stack + workgroup data + debugger bytes passes 4 GiB).
    let parse = |simd_count: u32| {
        let text = GpuProfile::gfx1100()
            .with_prop("simd_count", simd_count as u64)
            .properties_text(128);
        NodeProperties::parse(&text, Path::new("p"))
    };
    let ok = parse(8935 * 2).unwrap();
    let s = CwsrSizes::for_props(&ok).unwrap();
    assert!(s.allocation_size().unwrap() <= u32::MAX as usize);
    let e = parse(8936 * 2).unwrap_err().to_string();
    assert!(
        e.starts_with("p: simd_count 17872 / simd_per_cu 2 / num_xcc 1 = 8936 CUs: "),
        "{e}"
    );
    assert!(e.contains("overflows 32 bits"), "{e}");
    let e = open_with_prop("simd_count", 8936 * 2).unwrap_err().to_string();
    assert!(e.starts_with(PROPS) && e.contains("8936 CUs"), "{e}");

    // The workgroup data alone (0x75000 bytes per gfx11 CU) past 4 GiB, and the
    // wave count past 2^32.
    let e = parse(9000 * 2).unwrap_err().to_string();
    assert!(e.contains("workgroup context data"), "{e}");
    let e = parse(1 << 28).unwrap_err().to_string();
    assert!(e.contains("× 32 waves per CU overflows"), "{e}");
}

#[test]
fn properties_changed_after_parsing_are_checked_where_they_are_used() {
    let text = GpuProfile::gfx1100().properties_text(128);
    let mut p = NodeProperties::parse(&text, Path::new("p")).unwrap();
    p.lds_size_in_kb = u32::MAX;
    let e = p.lds_size().unwrap_err().to_string();
    assert!(e.contains("properties of gfx1100: lds_size_in_kb 4294967295"), "{e}");
    p.max_waves_per_simd = u32::MAX;
    assert!(p.waves_per_cu().is_err());
    p.simd_count = u32::MAX;
    p.simd_per_cu = 1;
    let e = CwsrSizes::for_props(&p).unwrap_err().to_string();
    assert!(e.contains("simd_count 4294967295 / simd_per_cu 1"), "{e}");
    // Sizes built by hand whose sum does not fit the ioctl's 32 bits.
    let s = CwsrSizes {
        ctl_stack_size: u32::MAX,
        wg_data_size: 4096,
        debug_memory_size: 0,
        xccs: 1,
    };
    assert!(s.ctx_save_restore_size().is_err());
    assert!(s.allocation_size().is_err());
    // A save area that fits once, but not once per XCC of an 8-XCC partition.
    let mut s = CwsrSizes {
        ctl_stack_size: 0x1000_0000,
        wg_data_size: 0x1000_0000,
        debug_memory_size: 0,
        xccs: 1,
    };
    assert_eq!(s.allocation_size().unwrap(), 0x2000_0000);
    s.xccs = 8;
    assert!(s.allocation_size().is_err());
}

#[test]
fn hostile_text_gives_errors() {
    let good = GpuProfile::gfx1100().properties_text(128);
    let p = Path::new("/x/properties");
    let parse = |t: &str| NodeProperties::parse(t, p).map_err(|e| e.to_string());
    let replace = |key: &str, value: &str| {
        good.lines()
            .map(|l| {
                if l.split_whitespace().next() == Some(key) {
                    format!("{key} {value}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for &key in FIELDS {
        for value in [
            "-1",
            "18446744073709551616",
            "99999999999999999999999999",
            "0x10",
            "1.5",
            "",
            "∞",
        ] {
            let t = replace(key, value);
            let e = parse(&t).expect_err(&format!("{key} {value:?}"));
            assert!(e.starts_with("/x/properties:"), "{e}");
        }
    }
    let e = parse(&replace("simd_count", "18446744073709551616")).unwrap_err();
    assert!(
        e.ends_with("simd_count: \"18446744073709551616\" does not fit 64 bits"),
        "{e}"
    );
    let e = parse(&replace("simd_count", "-1")).unwrap_err();
    assert!(e.ends_with("is not a non-negative integer"), "{e}");

    // Missing keys: every required one.
    for &key in &FIELDS[..REQUIRED] {
        let t: String = good
            .lines()
            .filter(|l| l.split_whitespace().next() != Some(key))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(parse(&t).unwrap_err(), format!("/x/properties: missing {key}"));
    }

    // A duplicated key names both lines, even with the same value.
    let e = parse(&format!("{good}simd_count 192\n")).unwrap_err();
    let n = good.lines().count() + 1;
    assert_eq!(e, format!("/x/properties:{n}: simd_count repeats the key of line 2"));

    // Very long lines and keys: an error of bounded length, quickly.
    let long_key = "k".repeat(1 << 20);
    let e = parse(&format!("{good}{long_key} 1 2\n")).unwrap_err();
    assert!(e.len() < 200, "{} bytes", e.len());
    let e = parse(&format!("{good}{long_key}\n")).unwrap_err();
    assert!(e.len() < 200, "{} bytes", e.len());
    let long_number = "9".repeat(1 << 20);
    let e = parse(&format!("{good}x {long_number}\n")).unwrap_err();
    assert!(e.contains("does not fit 64 bits") && e.len() < 200, "{e}");
    // An unknown key with a long name is kept, as any unknown key.
    let ok = NodeProperties::parse(&format!("{good}{long_key} 1\n"), p).unwrap();
    assert_eq!(ok.all[&long_key], 1);

    // Garbage: binary-looking text, blank lines, NUL, no newline at the end.
    for t in [
        "\0\0\0",
        "key\tvalue",
        "simd_count 1 2",
        &good[..good.rfind(' ').unwrap()],
        "\n\n\n",
    ] {
        assert!(parse(t).is_err(), "{t:?}");
    }
    // Through the mock: the error names the node's file.
    let e = open_all(GpuProfile::gfx1100().with_properties_text(format!("{good}simd_count 1\n"))).unwrap_err();
    assert!(e.to_string().starts_with(PROPS), "{e}");
}
