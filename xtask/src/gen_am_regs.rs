//! Generates `crates/amd-regs/src/regs_generated.rs`: the registers, register fields and
//! firmware-interface constants the driverless transport (`amd_am::regs::generated`)
//! and the mock PCI GPU's register model (which re-exports it) use, from the Linux
//! 6.12 amdgpu headers.
//!
//! Registers are emitted as `AmReg { offset, seg }` (the dword offset inside the IP's
//! register segment `seg`, which the discovery table's base addresses place); fields
//! as masks; constants (PSP commands, firmware types, SMU messages) from the enums and
//! `#define`s of `psp_gfx_if.h`, `amdgpu_psp.h`, `amdgpu_ucode.h` and
//! `smu_v13_0_0_ppsmc.h`. Only the names listed below are emitted.
//!
//! Headers: `--linux DIR`, `$AMD_LINUX_SRC`, or Debian's `linux-source-6.12` tarball.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::Result;
use crate::gen_regs::{parse_header, run_from_linux};

pub const OUTPUT: &str = "crates/amd-regs/src/regs_generated.rs";

const ASIC: &str = "drivers/gpu/drm/amd/include/asic_reg";

/// One version of an IP block's headers.
struct Version {
    /// The Rust name of its table.
    name: &'static str,
    /// The IP version (major, minor, revision) the headers describe.
    ip: [u8; 3],
    /// The headers' path without `_offset.h` / `_sh_mask.h`.
    stem: &'static str,
    /// (our name, the header's name) of a register or field renamed in this version; a
    /// renamed register's fields follow it.
    renamed: &'static [(&'static str, &'static str)],
    /// Registers and fields this version does not have.
    absent: &'static [&'static str],
}

/// An IP block's registers and fields, in every version the transport and the mock
/// know.
struct Block {
    module: &'static str,
    doc: &'static str,
    regs: &'static [&'static str],
    fields: &'static [&'static str],
    versions: &'static [Version],
}

/// The VM hubs' registers and fields both the driver and the mock read, by their names
/// without the hub's prefix (`GC`: `GCVM_…`, `GCMC_VM_…`; `MM`: `MMVM_…`, `MMMC_VM_…`):
/// `hub::HubTable` holds them for either hub.
const HUB: &[&str] = &[
    "MC_VM_AGP_BASE",
    "MC_VM_AGP_BOT",
    "MC_VM_AGP_TOP",
    "MC_VM_MX_L1_TLB_CNTL",
    "MC_VM_MX_L1_TLB_CNTL__ECO_BITS_MASK",
    "MC_VM_MX_L1_TLB_CNTL__ENABLE_ADVANCED_DRIVER_MODEL_MASK",
    "MC_VM_MX_L1_TLB_CNTL__ENABLE_L1_TLB_MASK",
    "MC_VM_MX_L1_TLB_CNTL__MTYPE_MASK",
    "MC_VM_MX_L1_TLB_CNTL__SYSTEM_ACCESS_MODE_MASK",
    "MC_VM_MX_L1_TLB_CNTL__SYSTEM_APERTURE_UNMAPPED_ACCESS_MASK",
    "MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB",
    "MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB",
    "MC_VM_SYSTEM_APERTURE_HIGH_ADDR",
    "MC_VM_SYSTEM_APERTURE_LOW_ADDR",
    "VM_CONTEXT0_CNTL",
    "VM_CONTEXT0_CNTL__ENABLE_CONTEXT_MASK",
    "VM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH_MASK",
    "VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32",
    "VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32",
    "VM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32",
    "VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32",
    "VM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32",
    "VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32",
    "VM_INVALIDATE_ENG0_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG0_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG10_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG10_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG11_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG11_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG12_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG12_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG13_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG13_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG14_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG14_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG15_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG15_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG16_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG16_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG17_ACK",
    "VM_INVALIDATE_ENG17_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG17_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG17_REQ",
    "VM_INVALIDATE_ENG17_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK",
    "VM_INVALIDATE_ENG17_REQ__FLUSH_TYPE_MASK",
    "VM_INVALIDATE_ENG17_REQ__INVALIDATE_L1_PTES_MASK",
    "VM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE0_MASK",
    "VM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE1_MASK",
    "VM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE2_MASK",
    "VM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PTES_MASK",
    "VM_INVALIDATE_ENG17_REQ__PER_VMID_INVALIDATE_REQ_MASK",
    "VM_INVALIDATE_ENG17_SEM",
    "VM_INVALIDATE_ENG17_SEM__SEMAPHORE_MASK",
    "VM_INVALIDATE_ENG1_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG1_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG2_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG2_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG3_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG3_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG4_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG4_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG5_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG5_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG6_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG6_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG7_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG7_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG8_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG8_ADDR_RANGE_LO32",
    "VM_INVALIDATE_ENG9_ADDR_RANGE_HI32",
    "VM_INVALIDATE_ENG9_ADDR_RANGE_LO32",
    "VM_L2_BANK_SELECT_RESERVED_CID2",
    "VM_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK",
    "VM_L2_CNTL",
    "VM_L2_CNTL2",
    "VM_L2_CNTL2__INVALIDATE_ALL_L1_TLBS_MASK",
    "VM_L2_CNTL2__INVALIDATE_L2_CACHE_MASK",
    "VM_L2_CNTL3",
    "VM_L2_CNTL3__BANK_SELECT_MASK",
    "VM_L2_CNTL3__L2_CACHE_4K_ASSOCIATIVITY_MASK",
    "VM_L2_CNTL3__L2_CACHE_BIGK_ASSOCIATIVITY_MASK",
    "VM_L2_CNTL3__L2_CACHE_BIGK_FRAGMENT_SIZE_MASK",
    "VM_L2_CNTL4",
    "VM_L2_CNTL4__L2_CACHE_4K_PARTITION_COUNT_MASK",
    "VM_L2_CNTL5",
    "VM_L2_CNTL5__WALKER_PRIORITY_CLIENT_ID_MASK",
    "VM_L2_CNTL__CONTEXT1_IDENTITY_ACCESS_MODE_MASK",
    "VM_L2_CNTL__ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_MASK",
    "VM_L2_CNTL__ENABLE_L2_CACHE_MASK",
    "VM_L2_CNTL__ENABLE_L2_FRAGMENT_PROCESSING_MASK",
    "VM_L2_CNTL__IDENTITY_MODE_FRAGMENT_SIZE_MASK",
    "VM_L2_CNTL__L2_PDE0_CACHE_TAG_GENERATION_MODE_MASK",
    "VM_L2_CNTL__PDE_FAULT_CLASSIFICATION_MASK",
    "VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32",
    "VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32",
    "VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32",
    "VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32",
    "VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32",
    "VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32",
    "VM_L2_PROTECTION_FAULT_ADDR_HI32",
    "VM_L2_PROTECTION_FAULT_ADDR_LO32",
    "VM_L2_PROTECTION_FAULT_CNTL",
    "VM_L2_PROTECTION_FAULT_CNTL2",
    "VM_L2_PROTECTION_FAULT_CNTL2__ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_MASK",
    "VM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK",
    "VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32",
    "VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32",
    "VM_L2_PROTECTION_FAULT_STATUS",
    "VM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK",
    "VM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK",
    "VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS_MASK",
    "VM_L2_PROTECTION_FAULT_STATUS__RW_MASK",
    "VM_L2_PROTECTION_FAULT_STATUS__WALKER_ERROR_MASK",
];

/// The blocks `hub::HubTable` is made from, each with its names' prefix.
const HUB_BLOCKS: &[(&str, &str)] = &[("gc", "GC"), ("mmhub", "MM")];

const REG_BLOCKS: &[Block] = &[
    Block {
        module: "mp",
        doc: "MP0 (PSP) and MP1 (SMU)",
        regs: &[
            "MP0_SMN_C2PMSG_35",
            "MP0_SMN_C2PMSG_36",
            "MP0_SMN_C2PMSG_64",
            "MP0_SMN_C2PMSG_67",
            "MP0_SMN_C2PMSG_69",
            "MP0_SMN_C2PMSG_70",
            "MP0_SMN_C2PMSG_71",
            "MP0_SMN_C2PMSG_81",
            "MP1_SMN_C2PMSG_66",
            "MP1_SMN_C2PMSG_82",
            "MP1_SMN_C2PMSG_90",
            "MP1_SMN_C2PMSG_53",
            "MP1_SMN_C2PMSG_54",
            "MP1_SMN_C2PMSG_75",
        ],
        fields: &[],
        versions: &[
            Version {
                name: "V13_0_0",
                ip: [13, 0, 0],
                stem: "mp/mp_13_0_0",
                renamed: &[],
                absent: &[],
            },
            Version {
                name: "V14_0_2",
                ip: [14, 0, 2],
                stem: "mp/mp_14_0_2",
                renamed: &[
                    ("MP0_SMN_C2PMSG_35", "MPASP_SMN_C2PMSG_35"),
                    ("MP0_SMN_C2PMSG_36", "MPASP_SMN_C2PMSG_36"),
                    ("MP0_SMN_C2PMSG_64", "MPASP_SMN_C2PMSG_64"),
                    ("MP0_SMN_C2PMSG_67", "MPASP_SMN_C2PMSG_67"),
                    ("MP0_SMN_C2PMSG_69", "MPASP_SMN_C2PMSG_69"),
                    ("MP0_SMN_C2PMSG_70", "MPASP_SMN_C2PMSG_70"),
                    ("MP0_SMN_C2PMSG_71", "MPASP_SMN_C2PMSG_71"),
                    ("MP0_SMN_C2PMSG_81", "MPASP_SMN_C2PMSG_81"),
                ],
                absent: &[],
            },
        ],
    },
    Block {
        module: "nbio",
        doc: "NBIO (NBIF)",
        regs: &[
            "BIF_BX_PF0_RSMU_INDEX",
            "BIF_BX_PF0_RSMU_DATA",
            "BIF_BX_PF0_GPU_HDP_FLUSH_REQ",
            "BIF_BX_PF0_GPU_HDP_FLUSH_DONE",
            "RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE",
            "RCC_DEV0_EPF2_STRAP2",
            "RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL",
        ],
        fields: &[
            "RCC_DEV0_EPF2_STRAP2__STRAP_NO_SOFT_RESET_DEV0_F2_MASK",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_ENABLE_MASK",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_AWID_MASK",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_RANGE_OFFSET_MASK",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_RANGE_SIZE_MASK",
            "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_AWADDR_31_28_VALUE_MASK",
        ],
        versions: &[
            Version {
                name: "V4_3_0",
                ip: [4, 3, 0],
                stem: "nbio/nbio_4_3_0",
                renamed: &[],
                // NBIO 4.3 routes doorbells with `S2A_DOORBELL_ENTRY_n_CTRL`, which
                // tinygrad 0.10.1 does not write.
                absent: &[
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_0_CTRL",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_3_CTRL",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_ENABLE_MASK",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_AWID_MASK",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_RANGE_OFFSET_MASK",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_RANGE_SIZE_MASK",
                    "GDC_S2A0_S2A_DOORBELL_ENTRY_2_CTRL__S2A_DOORBELL_PORT2_AWADDR_31_28_VALUE_MASK",
                ],
            },
            Version {
                name: "V6_3_1",
                ip: [6, 3, 1],
                stem: "nbif/nbif_6_3_1",
                renamed: &[],
                absent: &[],
            },
        ],
    },
    Block {
        module: "gc",
        doc: "GC",
        regs: &[
            "SCRATCH_REG7",
            "CP_MEC_RS64_CNTL",
            "CP_STAT",
            "RLC_RLCS_BOOTLOAD_STATUS",
            "GCVM_CONTEXT0_CNTL",
            "GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32",
            "GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32",
            "GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32",
            "GCVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32",
            "GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32",
            "GCVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32",
            "GCVM_INVALIDATE_ENG17_SEM",
            "GCVM_INVALIDATE_ENG17_REQ",
            "GCVM_INVALIDATE_ENG17_ACK",
            "GCVM_L2_BANK_SELECT_RESERVED_CID2",
            "GCVM_L2_PROTECTION_FAULT_CNTL",
            "GCVM_L2_PROTECTION_FAULT_STATUS",
            "GCVM_L2_PROTECTION_FAULT_ADDR_LO32",
            "GCVM_L2_PROTECTION_FAULT_ADDR_HI32",
            "GRBM_GFX_CNTL",
            "CP_MQD_BASE_ADDR",
            "CP_MQD_BASE_ADDR_HI",
            "CP_HQD_ACTIVE",
            "CP_HQD_VMID",
            "CP_HQD_PQ_BASE",
            "CP_HQD_PQ_BASE_HI",
            "CP_HQD_PQ_RPTR",
            "CP_HQD_PQ_RPTR_REPORT_ADDR",
            "CP_HQD_PQ_RPTR_REPORT_ADDR_HI",
            "CP_HQD_PQ_WPTR_POLL_ADDR",
            "CP_HQD_PQ_WPTR_POLL_ADDR_HI",
            "CP_HQD_PQ_DOORBELL_CONTROL",
            "CP_HQD_PQ_CONTROL",
            "CP_HQD_DEQUEUE_REQUEST",
            "CP_HQD_EOP_BASE_ADDR",
            "CP_HQD_EOP_BASE_ADDR_HI",
            "CP_HQD_EOP_CONTROL",
            "CP_HQD_PQ_WPTR_LO",
            "CP_HQD_PQ_WPTR_HI",
            "SDMA0_QUEUE0_RB_CNTL",
            "SDMA0_QUEUE0_RB_BASE",
            "SDMA0_QUEUE0_RB_BASE_HI",
            "SDMA0_QUEUE0_RB_RPTR",
            "SDMA0_QUEUE0_RB_RPTR_HI",
            "SDMA0_QUEUE0_RB_WPTR",
            "SDMA0_QUEUE0_RB_WPTR_HI",
            "SDMA0_QUEUE0_RB_RPTR_ADDR_HI",
            "SDMA0_QUEUE0_RB_RPTR_ADDR_LO",
            "SDMA0_QUEUE0_IB_CNTL",
            "SDMA0_QUEUE0_DOORBELL",
            "SDMA0_QUEUE0_DOORBELL_OFFSET",
            "SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI",
            "SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO",
            "SDMA0_QUEUE0_MINOR_PTR_UPDATE",
            "GCMC_VM_AGP_BASE",
            "GCMC_VM_AGP_BOT",
            "GCMC_VM_AGP_TOP",
            "GCMC_VM_SYSTEM_APERTURE_LOW_ADDR",
            "GCMC_VM_SYSTEM_APERTURE_HIGH_ADDR",
            "GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB",
            "GCMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB",
            "GCMC_VM_MX_L1_TLB_CNTL",
            "GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32",
            "GCVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32",
            "GCVM_L2_PROTECTION_FAULT_CNTL2",
            "GCVM_L2_CNTL",
            "GCVM_L2_CNTL2",
            "GCVM_L2_CNTL3",
            "GCVM_L2_CNTL4",
            "GCVM_L2_CNTL5",
            "GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32",
            "GCVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32",
            "GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32",
            "GCVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32",
            "GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32",
            "GCVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32",
            "GCVM_INVALIDATE_ENG0_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG0_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG1_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG1_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG2_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG2_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG3_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG3_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG4_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG4_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG5_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG5_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG6_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG6_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG7_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG7_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG8_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG8_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG9_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG9_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG10_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG10_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG11_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG11_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG12_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG12_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG13_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG13_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG14_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG14_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG15_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG15_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG16_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG16_ADDR_RANGE_HI32",
            "GCVM_INVALIDATE_ENG17_ADDR_RANGE_LO32",
            "GCVM_INVALIDATE_ENG17_ADDR_RANGE_HI32",
            "CP_PFP_PRGRM_CNTR_START",
            "CP_PFP_PRGRM_CNTR_START_HI",
            "CP_ME_PRGRM_CNTR_START",
            "CP_ME_PRGRM_CNTR_START_HI",
            "CP_MEC_RS64_PRGRM_CNTR_START",
            "CP_MEC_RS64_PRGRM_CNTR_START_HI",
            "CP_ME_CNTL",
            "TCP_CNTL",
            "RLC_SRM_CNTL",
            "GRBM_CNTL",
            "SH_MEM_CONFIG",
            "SH_MEM_BASES",
            "CP_MEC_DOORBELL_RANGE_LOWER",
            "CP_MEC_DOORBELL_RANGE_UPPER",
            "CP_HQD_PERSISTENT_STATE",
            "CP_HQD_PIPE_PRIORITY",
            "CP_HQD_QUEUE_PRIORITY",
            "CP_HQD_QUANTUM",
            "CP_HQD_IB_CONTROL",
            "CP_HQD_HQ_STATUS0",
            "CP_MQD_CONTROL",
            "CP_ME1_PIPE0_INT_CNTL",
            "CP_ME1_PIPE1_INT_CNTL",
            "CP_ME1_PIPE2_INT_CNTL",
            "CP_ME1_PIPE3_INT_CNTL",
            "SPI_COMPUTE_QUEUE_RESET",
            "RLC_SAFE_MODE",
            "RLC_CGCG_CGLS_CTRL",
            "CP_RB_WPTR_POLL_CNTL",
            "CP_INT_CNTL",
            "SDMA0_RLC_CGCG_CTRL",
            "RLC_CGTT_MGCG_OVERRIDE",
            "SDMA0_SEM_WAIT_FAIL_TIMER_CNTL",
            "SDMA0_WATCHDOG_CNTL",
            "SDMA0_UTCL1_CNTL",
            "SDMA0_UTCL1_PAGE",
            "SDMA0_F32_CNTL",
            "SDMA0_CNTL",
            "GRBM_SOFT_RESET",
        ],
        fields: &[
            "CP_MEC_RS64_CNTL__MEC_HALT_MASK",
            "RLC_RLCS_BOOTLOAD_STATUS__BOOTLOAD_COMPLETE_MASK",
            "GCVM_CONTEXT0_CNTL__ENABLE_CONTEXT_MASK",
            "GCVM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH_MASK",
            "GCVM_INVALIDATE_ENG17_SEM__SEMAPHORE_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__PER_VMID_INVALIDATE_REQ_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK",
            "GCVM_INVALIDATE_ENG17_ACK__PER_VMID_INVALIDATE_ACK_MASK",
            "GCVM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK",
            "GCVM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK",
            "GCVM_L2_PROTECTION_FAULT_STATUS__WALKER_ERROR_MASK",
            "GCVM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS_MASK",
            "GCVM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK",
            "GCVM_L2_PROTECTION_FAULT_STATUS__RW_MASK",
            "GRBM_GFX_CNTL__PIPEID_MASK",
            "GRBM_GFX_CNTL__MEID_MASK",
            "GRBM_GFX_CNTL__VMID_MASK",
            "GRBM_GFX_CNTL__QUEUEID_MASK",
            "CP_HQD_ACTIVE__ACTIVE_MASK",
            "CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK",
            "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
            "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK",
            "CP_HQD_DEQUEUE_REQUEST__DEQUEUE_REQ_MASK",
            "CP_HQD_EOP_CONTROL__EOP_SIZE_MASK",
            "SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK",
            "SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK",
            "SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_ENABLE_MASK",
            "SDMA0_QUEUE0_DOORBELL__ENABLE_MASK",
            "SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK",
            "GCMC_VM_MX_L1_TLB_CNTL__ENABLE_L1_TLB_MASK",
            "GCMC_VM_MX_L1_TLB_CNTL__SYSTEM_ACCESS_MODE_MASK",
            "GCMC_VM_MX_L1_TLB_CNTL__ENABLE_ADVANCED_DRIVER_MODEL_MASK",
            "GCMC_VM_MX_L1_TLB_CNTL__SYSTEM_APERTURE_UNMAPPED_ACCESS_MASK",
            "GCMC_VM_MX_L1_TLB_CNTL__ECO_BITS_MASK",
            "GCMC_VM_MX_L1_TLB_CNTL__MTYPE_MASK",
            "GCVM_L2_CNTL__ENABLE_L2_CACHE_MASK",
            "GCVM_L2_CNTL__ENABLE_L2_FRAGMENT_PROCESSING_MASK",
            "GCVM_L2_CNTL__ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_MASK",
            "GCVM_L2_CNTL__L2_PDE0_CACHE_TAG_GENERATION_MODE_MASK",
            "GCVM_L2_CNTL__PDE_FAULT_CLASSIFICATION_MASK",
            "GCVM_L2_CNTL__CONTEXT1_IDENTITY_ACCESS_MODE_MASK",
            "GCVM_L2_CNTL__IDENTITY_MODE_FRAGMENT_SIZE_MASK",
            "GCVM_L2_CNTL2__INVALIDATE_ALL_L1_TLBS_MASK",
            "GCVM_L2_CNTL2__INVALIDATE_L2_CACHE_MASK",
            "GCVM_L2_CNTL3__BANK_SELECT_MASK",
            "GCVM_L2_CNTL3__L2_CACHE_BIGK_FRAGMENT_SIZE_MASK",
            "GCVM_L2_CNTL3__L2_CACHE_4K_ASSOCIATIVITY_MASK",
            "GCVM_L2_CNTL3__L2_CACHE_BIGK_ASSOCIATIVITY_MASK",
            "GCVM_L2_CNTL4__L2_CACHE_4K_PARTITION_COUNT_MASK",
            "GCVM_L2_CNTL5__WALKER_PRIORITY_CLIENT_ID_MASK",
            "GCVM_L2_PROTECTION_FAULT_CNTL2__ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_MASK",
            "GCVM_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__FLUSH_TYPE_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PTES_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE0_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE1_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE2_MASK",
            "GCVM_INVALIDATE_ENG17_REQ__INVALIDATE_L1_PTES_MASK",
            "CP_ME_CNTL__PFP_PIPE0_RESET_MASK",
            "CP_ME_CNTL__PFP_PIPE1_RESET_MASK",
            "CP_ME_CNTL__ME_PIPE0_RESET_MASK",
            "CP_ME_CNTL__ME_PIPE1_RESET_MASK",
            "CP_MEC_RS64_CNTL__MEC_INVALIDATE_ICACHE_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE0_RESET_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE1_RESET_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE2_RESET_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE3_RESET_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE0_ACTIVE_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE1_ACTIVE_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE2_ACTIVE_MASK",
            "CP_MEC_RS64_CNTL__MEC_PIPE3_ACTIVE_MASK",
            "RLC_SRM_CNTL__SRM_ENABLE_MASK",
            "RLC_SRM_CNTL__AUTO_INCR_ADDR_MASK",
            "GRBM_CNTL__READ_TIMEOUT_MASK",
            "SH_MEM_CONFIG__ADDRESS_MODE_MASK",
            "SH_MEM_CONFIG__ALIGNMENT_MODE_MASK",
            "SH_MEM_CONFIG__INITIAL_INST_PREFETCH_MASK",
            "SH_MEM_BASES__SHARED_BASE_MASK",
            "SH_MEM_BASES__PRIVATE_BASE_MASK",
            "CP_HQD_PERSISTENT_STATE__PRELOAD_SIZE_MASK",
            "CP_HQD_PERSISTENT_STATE__PRELOAD_REQ_MASK",
            "CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE_MASK",
            "CP_HQD_PQ_CONTROL__UNORD_DISPATCH_MASK",
            "CP_HQD_IB_CONTROL__MIN_IB_AVAIL_SIZE_MASK",
            "CP_MQD_CONTROL__PRIV_STATE_MASK",
            "CP_ME1_PIPE0_INT_CNTL__TIME_STAMP_INT_ENABLE_MASK",
            "CP_ME1_PIPE0_INT_CNTL__GENERIC0_INT_ENABLE_MASK",
            "RLC_SAFE_MODE__CMD_MASK",
            "RLC_SAFE_MODE__MESSAGE_MASK",
            "RLC_CGCG_CGLS_CTRL__CGCG_GFX_IDLE_THRESHOLD_MASK",
            "RLC_CGCG_CGLS_CTRL__CGCG_EN_MASK",
            "RLC_CGCG_CGLS_CTRL__CGLS_REP_COMPANSAT_DELAY_MASK",
            "RLC_CGCG_CGLS_CTRL__CGLS_EN_MASK",
            "CP_RB_WPTR_POLL_CNTL__POLL_FREQUENCY_MASK",
            "CP_RB_WPTR_POLL_CNTL__IDLE_POLL_COUNT_MASK",
            "CP_INT_CNTL__CNTX_BUSY_INT_ENABLE_MASK",
            "CP_INT_CNTL__CNTX_EMPTY_INT_ENABLE_MASK",
            "CP_INT_CNTL__CMP_BUSY_INT_ENABLE_MASK",
            "CP_INT_CNTL__GFX_IDLE_INT_ENABLE_MASK",
            "SDMA0_RLC_CGCG_CTRL__CGCG_INT_ENABLE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__PERFMON_CLOCK_STATE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__GFXIP_FGCG_OVERRIDE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__GFXIP_REPEATER_FGCG_OVERRIDE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__GRBM_CGTT_SCLK_OVERRIDE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__RLC_CGTT_SCLK_OVERRIDE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__GFXIP_MGCG_OVERRIDE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGLS_OVERRIDE_MASK",
            "RLC_CGTT_MGCG_OVERRIDE__GFXIP_CGCG_OVERRIDE_MASK",
            "SDMA0_WATCHDOG_CNTL__QUEUE_HANG_COUNT_MASK",
            "SDMA0_UTCL1_CNTL__RESP_MODE_MASK",
            "SDMA0_UTCL1_CNTL__REDO_DELAY_MASK",
            "SDMA0_UTCL1_PAGE__RD_L2_POLICY_MASK",
            "SDMA0_UTCL1_PAGE__WR_L2_POLICY_MASK",
            "SDMA0_UTCL1_PAGE__LLC_NOALLOC_MASK",
            "SDMA0_F32_CNTL__HALT_MASK",
            "SDMA0_F32_CNTL__TH1_RESET_MASK",
            "SDMA0_CNTL__CTXEMPTY_INT_ENABLE_MASK",
            "SDMA0_CNTL__TRAP_ENABLE_MASK",
            "SDMA0_QUEUE0_RB_CNTL__RB_VMID_MASK",
            "SDMA0_QUEUE0_RB_CNTL__RPTR_WRITEBACK_TIMER_MASK",
            "SDMA0_QUEUE0_RB_CNTL__F32_WPTR_POLL_ENABLE_MASK",
            "SDMA0_QUEUE0_RB_CNTL__RB_PRIV_MASK",
            "SDMA0_QUEUE0_IB_CNTL__IB_ENABLE_MASK",
            "GRBM_SOFT_RESET__SOFT_RESET_SDMA0_MASK",
        ],
        versions: &[
            Version {
                name: "V11_0_0",
                ip: [11, 0, 0],
                stem: "gc/gc_11_0_0",
                renamed: &[],
                absent: &[],
            },
            Version {
                name: "V12_0_0",
                ip: [12, 0, 0],
                stem: "gc/gc_12_0_0",
                renamed: &[
                    (
                        "GCVM_L2_PROTECTION_FAULT_STATUS",
                        "GCVM_L2_PROTECTION_FAULT_STATUS_LO32",
                    ),
                    ("SDMA0_F32_CNTL", "SDMA0_MCU_CNTL"),
                    (
                        "SDMA0_QUEUE0_RB_CNTL__F32_WPTR_POLL_ENABLE_MASK",
                        "SDMA0_QUEUE0_RB_CNTL__MCU_WPTR_POLL_ENABLE_MASK",
                    ),
                ],
                absent: &[
                    "CP_ME1_PIPE2_INT_CNTL",
                    "CP_ME1_PIPE3_INT_CNTL",
                    "SDMA0_SEM_WAIT_FAIL_TIMER_CNTL",
                    "SDMA0_UTCL1_PAGE__LLC_NOALLOC_MASK",
                    "SDMA0_F32_CNTL__TH1_RESET_MASK",
                ],
            },
        ],
    },
    Block {
        module: "mmhub",
        doc: "MMHUB",
        regs: &[
            "MMMC_VM_FB_LOCATION_BASE",
            "MMVM_CONTEXT0_CNTL",
            "MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32",
            "MMVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32",
            "MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32",
            "MMVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32",
            "MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32",
            "MMVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32",
            "MMVM_INVALIDATE_ENG17_SEM",
            "MMVM_INVALIDATE_ENG17_REQ",
            "MMVM_INVALIDATE_ENG17_ACK",
            "MMVM_L2_BANK_SELECT_RESERVED_CID2",
            "MMVM_L2_PROTECTION_FAULT_CNTL",
            "MMVM_L2_PROTECTION_FAULT_STATUS",
            "MMVM_L2_PROTECTION_FAULT_ADDR_LO32",
            "MMVM_L2_PROTECTION_FAULT_ADDR_HI32",
            "MMMC_VM_AGP_BASE",
            "MMMC_VM_AGP_BOT",
            "MMMC_VM_AGP_TOP",
            "MMMC_VM_SYSTEM_APERTURE_LOW_ADDR",
            "MMMC_VM_SYSTEM_APERTURE_HIGH_ADDR",
            "MMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB",
            "MMMC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB",
            "MMMC_VM_MX_L1_TLB_CNTL",
            "MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32",
            "MMVM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32",
            "MMVM_L2_PROTECTION_FAULT_CNTL2",
            "MMVM_L2_CNTL",
            "MMVM_L2_CNTL2",
            "MMVM_L2_CNTL3",
            "MMVM_L2_CNTL4",
            "MMVM_L2_CNTL5",
            "MMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32",
            "MMVM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32",
            "MMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32",
            "MMVM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32",
            "MMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32",
            "MMVM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32",
            "MMVM_INVALIDATE_ENG0_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG0_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG1_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG1_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG2_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG2_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG3_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG3_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG4_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG4_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG5_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG5_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG6_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG6_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG7_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG7_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG8_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG8_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG9_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG9_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG10_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG10_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG11_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG11_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG12_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG12_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG13_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG13_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG14_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG14_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG15_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG15_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG16_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG16_ADDR_RANGE_HI32",
            "MMVM_INVALIDATE_ENG17_ADDR_RANGE_LO32",
            "MMVM_INVALIDATE_ENG17_ADDR_RANGE_HI32",
        ],
        fields: &[
            "MMVM_CONTEXT0_CNTL__ENABLE_CONTEXT_MASK",
            "MMVM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH_MASK",
            "MMVM_INVALIDATE_ENG17_SEM__SEMAPHORE_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__PER_VMID_INVALIDATE_REQ_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK",
            "MMVM_INVALIDATE_ENG17_ACK__PER_VMID_INVALIDATE_ACK_MASK",
            "MMVM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK",
            "MMVM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK",
            "MMVM_L2_PROTECTION_FAULT_STATUS__WALKER_ERROR_MASK",
            "MMVM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS_MASK",
            "MMVM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK",
            "MMVM_L2_PROTECTION_FAULT_STATUS__RW_MASK",
            "MMMC_VM_MX_L1_TLB_CNTL__ENABLE_L1_TLB_MASK",
            "MMMC_VM_MX_L1_TLB_CNTL__SYSTEM_ACCESS_MODE_MASK",
            "MMMC_VM_MX_L1_TLB_CNTL__ENABLE_ADVANCED_DRIVER_MODEL_MASK",
            "MMMC_VM_MX_L1_TLB_CNTL__SYSTEM_APERTURE_UNMAPPED_ACCESS_MASK",
            "MMMC_VM_MX_L1_TLB_CNTL__ECO_BITS_MASK",
            "MMMC_VM_MX_L1_TLB_CNTL__MTYPE_MASK",
            "MMVM_L2_CNTL__ENABLE_L2_CACHE_MASK",
            "MMVM_L2_CNTL__ENABLE_L2_FRAGMENT_PROCESSING_MASK",
            "MMVM_L2_CNTL__ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY_MASK",
            "MMVM_L2_CNTL__L2_PDE0_CACHE_TAG_GENERATION_MODE_MASK",
            "MMVM_L2_CNTL__PDE_FAULT_CLASSIFICATION_MASK",
            "MMVM_L2_CNTL__CONTEXT1_IDENTITY_ACCESS_MODE_MASK",
            "MMVM_L2_CNTL__IDENTITY_MODE_FRAGMENT_SIZE_MASK",
            "MMVM_L2_CNTL2__INVALIDATE_ALL_L1_TLBS_MASK",
            "MMVM_L2_CNTL2__INVALIDATE_L2_CACHE_MASK",
            "MMVM_L2_CNTL3__BANK_SELECT_MASK",
            "MMVM_L2_CNTL3__L2_CACHE_BIGK_FRAGMENT_SIZE_MASK",
            "MMVM_L2_CNTL3__L2_CACHE_4K_ASSOCIATIVITY_MASK",
            "MMVM_L2_CNTL3__L2_CACHE_BIGK_ASSOCIATIVITY_MASK",
            "MMVM_L2_CNTL4__L2_CACHE_4K_PARTITION_COUNT_MASK",
            "MMVM_L2_CNTL5__WALKER_PRIORITY_CLIENT_ID_MASK",
            "MMVM_L2_PROTECTION_FAULT_CNTL2__ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY_MASK",
            "MMVM_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__FLUSH_TYPE_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PTES_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE0_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE1_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__INVALIDATE_L2_PDE2_MASK",
            "MMVM_INVALIDATE_ENG17_REQ__INVALIDATE_L1_PTES_MASK",
        ],
        versions: &[
            Version {
                name: "V3_0_0",
                ip: [3, 0, 0],
                stem: "mmhub/mmhub_3_0_0",
                renamed: &[],
                absent: &[],
            },
            Version {
                name: "V4_1_0",
                ip: [4, 1, 0],
                stem: "mmhub/mmhub_4_1_0",
                renamed: &[(
                    "MMVM_L2_PROTECTION_FAULT_STATUS",
                    "MMVM_L2_PROTECTION_FAULT_STATUS_LO32",
                )],
                absent: &[],
            },
        ],
    },
    Block {
        module: "osssys",
        doc: "OSSSYS (the interrupt handler)",
        regs: &[
            "IH_RB_CNTL",
            "IH_RB_BASE",
            "IH_RB_BASE_HI",
            "IH_RB_RPTR",
            "IH_RB_WPTR",
            "IH_RB_WPTR_ADDR_HI",
            "IH_RB_WPTR_ADDR_LO",
            "IH_DOORBELL_RPTR",
            "IH_RB_CNTL_RING1",
            "IH_RB_BASE_RING1",
            "IH_RB_BASE_HI_RING1",
            "IH_RB_RPTR_RING1",
            "IH_RB_WPTR_RING1",
            "IH_DOORBELL_RPTR_RING1",
            "IH_CNTL",
            "IH_INT_FLOOD_CNTL",
            "IH_STORM_CLIENT_LIST_CNTL",
            "IH_MSI_STORM_CTRL",
        ],
        fields: &[
            "IH_RB_CNTL__RB_ENABLE_MASK",
            "IH_RB_CNTL__RB_SIZE_MASK",
            "IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK",
            "IH_RB_CNTL__RB_FULL_DRAIN_ENABLE_MASK",
            "IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK",
            "IH_RB_CNTL__ENABLE_INTR_MASK",
            "IH_RB_CNTL__RPTR_REARM_MASK",
            "IH_RB_CNTL__MC_SPACE_MASK",
            "IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK",
            "IH_RB_CNTL__MC_SNOOP_MASK",
            "IH_RB_CNTL__MC_RO_MASK",
            "IH_RB_CNTL__MC_VMID_MASK",
            "IH_STORM_CLIENT_LIST_CNTL__CLIENT18_IS_STORM_CLIENT_MASK",
            "IH_INT_FLOOD_CNTL__FLOOD_CNTL_ENABLE_MASK",
            "IH_MSI_STORM_CTRL__DELAY_MASK",
            "IH_RB_WPTR__RB_OVERFLOW_MASK",
            "IH_RB_WPTR__OFFSET_MASK",
            "IH_DOORBELL_RPTR__OFFSET_MASK",
            "IH_DOORBELL_RPTR__ENABLE_MASK",
        ],
        versions: &[
            Version {
                name: "V6_0_0",
                ip: [6, 0, 0],
                stem: "oss/osssys_6_0_0",
                renamed: &[],
                absent: &[],
            },
            Version {
                name: "V7_0_0",
                ip: [7, 0, 0],
                stem: "oss/osssys_7_0_0",
                renamed: &[],
                absent: &[],
            },
        ],
    },
];

/// (module, doc, headers, names (a trailing `_` makes a prefix), Rust type: `u32` or
/// `u64`).
type ConstGroup = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static str,
);

const CONSTS: &[ConstGroup] = &[
    (
        "psp",
        "PSP interface (`psp_gfx_if.h`, `amdgpu_psp.h`, `amdgpu_ucode.h`)",
        &[
            "drivers/gpu/drm/amd/amdgpu/psp_gfx_if.h",
            "drivers/gpu/drm/amd/amdgpu/amdgpu_psp.h",
            "drivers/gpu/drm/amd/amdgpu/amdgpu_ucode.h",
        ],
        &[
            "GFX_CMD_ID_",
            "GFX_CTRL_CMD_ID_",
            "GFX_FW_TYPE_",
            "PSP_BL__",
            "PSP_RING_TYPE__",
            "PSP_FW_TYPE_",
            "PSP_ERR_",
            "TEE_ERROR_",
            "PSP_1_MEG",
            "PSP_CMD_BUFFER_SIZE",
            "PSP_FENCE_BUFFER_SIZE",
            "PSP_TMR_ALIGNMENT",
            "GFX_CMD_RESPONSE_MASK",
            "GFX_CMD_STATUS_MASK",
        ],
        "u32",
    ),
    (
        "smu",
        "SMU 13.0.0 messages (`smu_v13_0_0_ppsmc.h`), and SMU 14's debug-mailbox messages \
         (`smu_v14_0_2_ppt.c`)",
        &[
            "drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if/smu_v13_0_0_ppsmc.h",
            "drivers/gpu/drm/amd/pm/swsmu/smu14/smu_v14_0_2_ppt.c",
        ],
        &["PPSMC_MSG_", "PPSMC_Result_", "DEBUGSMC_MSG_"],
        "u32",
    ),
    (
        "vm",
        "GPU page-table entry bits (`amdgpu_vm.h`)",
        &["drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h"],
        &[
            "AMDGPU_PTE_VALID",
            "AMDGPU_PTE_SYSTEM",
            "AMDGPU_PTE_SNOOPED",
            "AMDGPU_PTE_EXECUTABLE",
            "AMDGPU_PTE_READABLE",
            "AMDGPU_PTE_WRITEABLE",
            "AMDGPU_PDE_PTE",
            "AMDGPU_PDE_PTE_GFX12",
            "AMDGPU_PTE_IS_PTE",
            "AMDGPU_VM_PDB2",
            "AMDGPU_VM_PDB1",
            "AMDGPU_VM_PDB0",
            "AMDGPU_VM_PTB",
        ],
        "u64",
    ),
    (
        "ih",
        "Interrupt sources (`soc15_ih_clientid.h`, `irqsrcs_gfx_11_0_0.h`, `irqsrcs_vmc_1_0.h`)",
        &[
            "drivers/gpu/drm/amd/include/soc15_ih_clientid.h",
            "drivers/gpu/drm/amd/include/ivsrcid/gfx/irqsrcs_gfx_11_0_0.h",
            "drivers/gpu/drm/amd/include/ivsrcid/vmc/irqsrcs_vmc_1_0.h",
        ],
        &[
            "SOC21_IH_CLIENTID_",
            "GFX_11_0_0__SRCID__",
            "VMC_1_0__SRCID__VM_FAULT",
            "UTCL2_1_0__SRCID__FAULT",
        ],
        "u32",
    ),
    (
        "smu_if",
        "SMU 13.0.0 driver interface (`smu13_driver_if_v13_0_0.h`): table ids, clocks, temperatures",
        &[SMU_IF],
        &[
            "TABLE_",
            "PPCLK_",
            "TEMP_",
            "SVI_PLANE_",
            "THROTTLER_COUNT",
            "D3HOT_SEQUENCE_COUNT",
        ],
        "u32",
    ),
    (
        "soc21_enum",
        "SOC21 register enumerations (`soc21_enum.h`)",
        &["drivers/gpu/drm/amd/include/soc21_enum.h"],
        &["SH_MEM_ADDRESS_MODE_64", "SH_MEM_ALIGNMENT_MODE_UNALIGNED"],
        "u32",
    ),
    (
        "doorbell",
        "Doorbell indices of Navi 1x and later (`amdgpu_doorbell.h`), in 64-bit slots",
        &["drivers/gpu/drm/amd/amdgpu/amdgpu_doorbell.h"],
        &[
            "AMDGPU_NAVI10_DOORBELL_MEC_RING0",
            "AMDGPU_NAVI10_DOORBELL_sDMA_ENGINE0",
            "AMDGPU_NAVI10_DOORBELL_IH",
        ],
        "u32",
    ),
];

/// The SMU 13.0.0 driver interface: table ids, clock and temperature indices, and the
/// metrics table's layout.
const SMU_IF: &str = "drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if/smu13_driver_if_v13_0_0.h";
/// (struct, Rust module, doc): structs whose field offsets are emitted, in order (a
/// later one may contain an earlier one).
const STRUCTS: &[(&str, &str)] = &[
    ("SmuMetrics_t", "smu_metrics"),
    ("SmuMetricsExternal_t", "smu_metrics_external"),
];

fn headers() -> Vec<String> {
    let mut v: Vec<String> = REG_BLOCKS
        .iter()
        .flat_map(|b| b.versions)
        .flat_map(|v| {
            [
                format!("{ASIC}/{}_offset.h", v.stem),
                format!("{ASIC}/{}_sh_mask.h", v.stem),
            ]
        })
        .collect();
    v.push(SMU_IF.to_string());
    for c in CONSTS {
        v.extend(c.2.iter().map(|h| h.to_string()));
    }
    // tar refuses a member named twice.
    v.sort();
    v.dedup();
    v
}

pub fn run(args: &[String]) -> Result<()> {
    run_from_linux(args, &headers(), OUTPUT, "gen-am-regs", generate)
}

fn parse_value(v: &str, known: &BTreeMap<String, u64>) -> Option<u64> {
    let v = v.trim().trim_end_matches(',').trim_end_matches(['L', 'U', 'u', 'l']);
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Ok(n) = v.parse() {
        Some(n)
    } else {
        known.get(v).copied()
    }
}

/// `(1ULL << n)` and the like: a constant shifted left.
fn parse_shift(v: &str) -> Option<u64> {
    let inner = v.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (a, b) = inner.split_once("<<")?;
    let a = parse_value(a, &BTreeMap::new())?;
    let b: u32 = b.trim().parse().ok()?;
    a.checked_shl(b).filter(|r| r >> b == a)
}

/// Every `#define NAME value` and every enumerator (explicit or counted) in `text`.
pub fn parse_constants(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut in_enum = false;
    let mut next = 0u64;
    for raw in text.lines() {
        let line = raw
            .split("/*")
            .next()
            .unwrap_or("")
            .split("//")
            .next()
            .unwrap_or("")
            .trim();
        if let Some(rest) = line.strip_prefix("#define") {
            let mut p = rest.split_whitespace();
            if let (Some(n), Some(v)) = (p.next(), p.next()) {
                let whole: String = p.fold(v.to_string(), |a, t| a + " " + t);
                if let Some(v) = parse_value(v, &out).or_else(|| parse_shift(&whole)) {
                    out.insert(n.to_string(), v);
                }
            }
            continue;
        }
        if (line.starts_with("enum") || line.starts_with("typedef enum")) && !line.contains(';') {
            in_enum = true;
            next = 0;
            continue;
        }
        if !in_enum {
            continue;
        }
        if line.starts_with('}') {
            in_enum = false;
            continue;
        }
        let item = line.trim_end_matches(',').trim();
        if item.is_empty() || item == "{" {
            continue;
        }
        let (name, value) = match item.split_once('=') {
            Some((n, v)) => (n.trim(), parse_value(v, &out)),
            None => (item, Some(next)),
        };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(v) = value {
            out.insert(name.to_string(), v);
            next = v.wrapping_add(1);
        }
    }
    out
}

fn read(linux: &Path, rel: &str) -> Result<String> {
    let p = linux.join(rel);
    std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()).into())
}

/// A field of a C struct: name, byte offset, element size, element count.
type CMember = (String, usize, usize, usize);

/// The layout of `typedef struct { … } name;` in `text` with natural alignment, its
/// fields' types among the fixed-width integers and the structs in `known` (size,
/// alignment), array lengths numbers or constants from `consts`: (fields, size,
/// alignment).
pub fn struct_layout(
    text: &str,
    name: &str,
    consts: &BTreeMap<String, u64>,
    known: &BTreeMap<String, (usize, usize)>,
) -> Result<(Vec<CMember>, usize, usize)> {
    let end = text
        .find(&format!("}} {name};"))
        .ok_or_else(|| format!("no struct {name}"))?;
    let start = text[..end]
        .rfind("typedef struct {")
        .ok_or_else(|| format!("{name}: no typedef struct"))?;
    let body = &text[start + "typedef struct {".len()..end];
    // Comments out: `//` to the end of the line, `/* … */`.
    let mut clean = String::new();
    for line in body.lines() {
        clean.push_str(line.split("//").next().unwrap_or(""));
        clean.push('\n');
    }
    while let Some(a) = clean.find("/*") {
        let b = clean[a..]
            .find("*/")
            .ok_or_else(|| format!("{name}: unterminated comment"))?;
        clean.replace_range(a..a + b + 2, " ");
    }
    let mut fields = Vec::new();
    let (mut off, mut align) = (0usize, 1usize);
    for decl in clean.split(';').map(str::trim).filter(|d| !d.is_empty()) {
        let mut words = decl.split_whitespace();
        let ty = words.next().ok_or_else(|| format!("{name}: empty declaration"))?;
        let rest: String = words.collect();
        let (field, count) = match rest.split_once('[') {
            Some((f, dim)) => {
                let dim = dim
                    .strip_suffix(']')
                    .ok_or_else(|| format!("{name}.{f}: a multi-dimensional or odd array"))?;
                let n = parse_value(dim, consts).ok_or_else(|| format!("{name}.{f}: array size {dim}"))?;
                (f.to_string(), usize::try_from(n)?)
            }
            None => (rest, 1),
        };
        let (size, al) = match ty {
            "uint8_t" | "int8_t" => (1, 1),
            "uint16_t" | "int16_t" => (2, 2),
            "uint32_t" | "int32_t" => (4, 4),
            "uint64_t" | "int64_t" => (8, 8),
            t => *known.get(t).ok_or_else(|| format!("{name}.{field}: type {t}"))?,
        };
        off = off.next_multiple_of(al);
        fields.push((field, off, size, count));
        off += size * count;
        align = align.max(al);
    }
    Ok((fields, off.next_multiple_of(align), align))
}

/// A register's or field's name in `v`'s headers: renamed, following a renamed
/// register (`REG__FIELD_MASK`), or our own.
fn header_name(v: &Version, name: &str) -> String {
    if let Some((_, theirs)) = v.renamed.iter().find(|(ours, _)| *ours == name) {
        return theirs.to_string();
    }
    if let Some((reg, field)) = name.split_once("__")
        && let Some((_, theirs)) = v.renamed.iter().find(|(ours, _)| *ours == reg)
    {
        return format!("{theirs}__{field}");
    }
    name.to_string()
}

/// One block: the field masks equal in every version as constants, and a `Table` of
/// the registers and the differing masks, one constant per version.
/// How a block's register or field is read from its module: `t.NAME` (a `Table`
/// field: a register, or a mask that differs between versions) or `NAME` (a mask the
/// same in every version); `None` where some version lacks it.
type Reads = BTreeMap<&'static str, Option<Read>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    Register,
    TableMask,
    Const,
}

fn write_block(out: &mut String, linux: &Path, b: &Block) -> Result<Reads> {
    // Per version: registers (header name, offset, segment) and masks, `None` where absent.
    type Regs = Vec<Option<(String, u32, u32)>>;
    let mut regs: Vec<Regs> = Vec::new();
    let mut masks: Vec<Vec<Option<u64>>> = Vec::new();
    for v in b.versions {
        let offsets = format!("{ASIC}/{}_offset.h", v.stem);
        let fields = format!("{ASIC}/{}_sh_mask.h", v.stem);
        let table: BTreeMap<String, (u32, u32)> = parse_header(&read(linux, &offsets)?, "reg")
            .into_iter()
            .map(|(n, o, s)| (n, (o, s)))
            .collect();
        let consts = parse_constants(&read(linux, &fields)?);
        let mut r = Vec::new();
        for name in b.regs {
            if v.absent.contains(name) {
                r.push(None);
                continue;
            }
            let theirs = header_name(v, name);
            let (o, s) = table.get(&theirs).ok_or_else(|| format!("{offsets}: no reg{theirs}"))?;
            r.push(Some((theirs, *o, *s)));
        }
        let mut m = Vec::new();
        for name in b.fields {
            if v.absent.contains(name) {
                m.push(None);
                continue;
            }
            let theirs = header_name(v, name);
            m.push(Some(
                *consts.get(&theirs).ok_or_else(|| format!("{fields}: no {theirs}"))?,
            ));
        }
        regs.push(r);
        masks.push(m);
    }
    let versions: Vec<String> = b
        .versions
        .iter()
        .map(|v| format!("{} {}.{}.{}", b.doc, v.ip[0], v.ip[1], v.ip[2]))
        .collect();
    let same = |i: usize| masks.iter().all(|m| m[i].is_some() && m[i] == masks[0][i]);
    let absent_in = |present: &dyn Fn(usize) -> bool| -> String {
        let gone: Vec<&str> = (0..b.versions.len())
            .filter(|&k| !present(k))
            .map(|k| versions[k].as_str())
            .collect();
        gone.join(", ")
    };
    writeln!(out)?;
    writeln!(
        out,
        "/// Registers and fields of {}, one [`{}::Table`] per version of the headers.",
        b.doc, b.module
    )?;
    writeln!(out, "pub mod {} {{", b.module)?;
    writeln!(out, "    use super::AmReg;")?;
    for (i, f) in b.fields.iter().enumerate() {
        if same(i) {
            writeln!(out, "    /// `{f}`, the same in every version")?;
            writeln!(out, "    pub const {f}: u32 = {:#010x};", masks[0][i].unwrap_or(0))?;
        }
    }
    writeln!(
        out,
        "    /// The registers of {} at one version, and the field masks that differ between versions.",
        b.doc
    )?;
    writeln!(out, "    #[derive(Debug, Clone, Copy, PartialEq, Eq)]")?;
    writeln!(out, "    pub struct Table {{")?;
    writeln!(
        out,
        "        /// The IP version the headers describe (major, minor, revision)."
    )?;
    writeln!(out, "        pub version: [u8; 3],")?;
    for (i, name) in b.regs.iter().enumerate() {
        let present = |k: usize| regs[k][i].is_some();
        if (0..b.versions.len()).all(present) {
            writeln!(out, "        /// `reg{name}`")?;
            writeln!(out, "        pub {name}: AmReg,")?;
        } else {
            writeln!(out, "        /// `reg{name}`; `None` in {}", absent_in(&present))?;
            writeln!(out, "        pub {name}: Option<AmReg>,")?;
        }
    }
    for (i, f) in b.fields.iter().enumerate() {
        if same(i) {
            continue;
        }
        let present = |k: usize| masks[k][i].is_some();
        if (0..b.versions.len()).all(present) {
            writeln!(out, "        /// `{f}`")?;
            writeln!(out, "        pub {f}: u32,")?;
        } else {
            writeln!(out, "        /// `{f}`; `None` in {}", absent_in(&present))?;
            writeln!(out, "        pub {f}: Option<u32>,")?;
        }
    }
    out.push_str(
        "    }
    impl super::Versioned for Table {
        fn version(&self) -> [u8; 3] {
            self.version
        }
    }
",
    );
    for (k, v) in b.versions.iter().enumerate() {
        writeln!(
            out,
            "    /// {} (`{}_offset.h`, `{}_sh_mask.h`).",
            versions[k], v.stem, v.stem
        )?;
        writeln!(out, "    pub const {}: Table = Table {{", v.name)?;
        writeln!(out, "        version: [{}, {}, {}],", v.ip[0], v.ip[1], v.ip[2])?;
        let all = |i: usize| (0..b.versions.len()).all(|j| regs[j][i].is_some());
        for (i, name) in b.regs.iter().enumerate() {
            let reg = regs[k][i]
                .as_ref()
                .map(|(n, o, s)| format!("AmReg {{ name: \"{n}\", offset: {o:#06x}, seg: {s} }}"));
            match (reg, all(i)) {
                (Some(r), true) => writeln!(out, "        {name}: {r},")?,
                (Some(r), false) => writeln!(out, "        {name}: Some({r}),")?,
                (None, _) => writeln!(out, "        {name}: None,")?,
            }
        }
        for (i, f) in b.fields.iter().enumerate() {
            if same(i) {
                continue;
            }
            let everywhere = masks.iter().all(|m| m[i].is_some());
            match (masks[k][i], everywhere) {
                (Some(m), true) => writeln!(out, "        {f}: {m:#010x},")?,
                (Some(m), false) => writeln!(out, "        {f}: Some({m:#010x}),")?,
                (None, _) => writeln!(out, "        {f}: None,")?,
            }
        }
        writeln!(out, "    }};")?;
    }
    let names: Vec<&str> = b.versions.iter().map(|v| v.name).collect();
    writeln!(out, "    /// Every version, oldest first.")?;
    writeln!(out, "    pub const VERSIONS: &[Table] = &[{}];", names.join(", "))?;
    writeln!(out, "}}")?;
    let mut reads = Reads::new();
    for (i, name) in b.regs.iter().enumerate() {
        let everywhere = regs.iter().all(|r| r[i].is_some());
        reads.insert(name, everywhere.then_some(Read::Register));
    }
    for (i, f) in b.fields.iter().enumerate() {
        let everywhere = masks.iter().all(|m| m[i].is_some());
        let read = if same(i) { Read::Const } else { Read::TableMask };
        reads.insert(f, everywhere.then_some(read));
    }
    Ok(reads)
}

/// `pub mod hub`: [`HUB`]'s registers and fields by hub-neutral names, and a function
/// per hub's block that reads them from one of its `Table`s.
fn write_hubs(out: &mut String, reads: &BTreeMap<&str, Reads>) -> Result<()> {
    out.push_str(
        "
/// The VM hubs' registers and fields by names without the hub's prefix (`VM_…` for
/// `GCVM_…` and `MMVM_…`, `MC_VM_…` for `GCMC_VM_…` and `MMMC_VM_…`): the two hubs'
/// layouts are the same, so one reading of them serves both.
pub mod hub {
    use super::AmReg;
    /// One hub's registers and field masks at one version.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct HubTable {
",
    );
    // How `module` reads `theirs`: it must be in every version.
    let read_of = |module: &str, theirs: &str| {
        reads[module]
            .get(theirs)
            .copied()
            .flatten()
            .ok_or_else(|| format!("{module}: {theirs} is not in every version"))
    };
    let (first, first_prefix) = HUB_BLOCKS[0];
    for name in HUB {
        let read = read_of(first, &format!("{first_prefix}{name}"))?;
        let ty = if read == Read::Register { "AmReg" } else { "u32" };
        writeln!(out, "        /// `{first_prefix}{name}` and its twins")?;
        writeln!(out, "        pub {name}: {ty},")?;
    }
    writeln!(out, "    }}")?;
    for (module, prefix) in HUB_BLOCKS {
        writeln!(out, "    /// The {module} hub's, from `t`.")?;
        writeln!(out, "    pub fn {module}(t: &super::{module}::Table) -> HubTable {{")?;
        writeln!(out, "        HubTable {{")?;
        for name in HUB {
            let theirs = format!("{prefix}{name}");
            match read_of(module, &theirs)? {
                Read::Register | Read::TableMask => writeln!(out, "            {name}: t.{theirs},")?,
                Read::Const => writeln!(out, "            {name}: super::{module}::{theirs},")?,
            }
        }
        writeln!(out, "        }}")?;
        writeln!(out, "    }}")?;
    }
    writeln!(out, "}}")?;
    Ok(())
}

pub fn generate(linux: &Path) -> Result<String> {
    let mut out = String::from(
        "\
// @generated by `cargo xtask gen-am-regs` from linux-6.12 drivers/gpu/drm/amd. Do not edit.

use super::{AmReg, CField, Versioned};
",
    );
    let mut reads = BTreeMap::new();
    for block in REG_BLOCKS {
        reads.insert(block.module, write_block(&mut out, linux, block)?);
    }
    write_hubs(&mut out, &reads)?;
    let smu_if = read(linux, SMU_IF)?;
    let consts = parse_constants(&smu_if);
    let mut known = BTreeMap::new();
    for (name, module) in STRUCTS {
        let (fields, size, align) = struct_layout(&smu_if, name, &consts, &known)?;
        known.insert(name.to_string(), (size, align));
        let places = crate::lines(&fields, |(f, off, sz, n)| {
            format!(
                "    /// `{name}.{f}`\n    pub const {f}: CField = CField {{ offset: {off:#x}, size: {sz}, count: {n} }};"
            )
        });
        write!(
            out,
            "
/// `{name}` (`smu13_driver_if_v13_0_0.h`): each field's place.
pub mod {module} {{
    use super::CField;
    /// `sizeof({name})`
    pub const SIZE: usize = {size:#x};
{places}}}
"
        )?;
    }
    for (module, doc, headers, prefixes, ty) in CONSTS {
        let mut all = BTreeMap::new();
        for h in headers.iter() {
            all.extend(parse_constants(&read(linux, h)?));
        }
        writeln!(out)?;
        writeln!(out, "/// {doc}.")?;
        writeln!(out, "pub mod {module} {{")?;
        let mut n = 0;
        for (name, v) in &all {
            let fits = *ty == "u64" || *v <= u32::MAX as u64;
            if !prefixes
                .iter()
                .any(|p| name == p || (p.ends_with('_') && name.starts_with(p)))
                || !fits
            {
                continue;
            }
            writeln!(out, "    /// `{name}`")?;
            writeln!(out, "    pub const {name}: {ty} = {v:#x};")?;
            n += 1;
        }
        if n == 0 {
            return Err(format!("{module}: no constants found").into());
        }
        writeln!(out, "}}")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed file matches what the headers give, where the headers exist here.
    #[test]
    fn generated_am_registers_are_current() {
        crate::gen_regs::assert_current(&headers(), OUTPUT, "gen-am-regs", generate);
    }

    #[test]
    fn lays_out_structs_with_natural_alignment() {
        let text = "typedef struct {\n  uint8_t a; // c\n  uint32_t b[N];\n  uint16_t c;\n} S;\n\
                    typedef struct {\n  uint8_t x;\n  S s; /* in */\n} T;\n";
        let consts = BTreeMap::from([("N".to_string(), 2u64)]);
        let (f, size, align) = struct_layout(text, "S", &consts, &BTreeMap::new()).unwrap();
        assert_eq!(
            f,
            [
                ("a".to_string(), 0, 1, 1),
                ("b".to_string(), 4, 4, 2),
                ("c".to_string(), 12, 2, 1)
            ]
        );
        assert_eq!((size, align), (16, 4));
        let known = BTreeMap::from([("S".to_string(), (16, 4))]);
        let (f, size, _) = struct_layout(text, "T", &consts, &known).unwrap();
        assert_eq!((f[1].1, size), (4, 20));
        assert!(struct_layout(text, "T", &consts, &BTreeMap::new()).is_err());
    }

    #[test]
    fn parses_enums_and_defines() {
        let text = "#define A 0x10\nenum e {\n  X = 0x5, /* c */\n  Y,\n  Z = X,\n};\nenum f { };\n";
        let c = parse_constants(text);
        assert_eq!((c["A"], c["X"], c["Y"], c["Z"]), (0x10, 5, 6, 5));
        let c = parse_constants("#define B\t(1ULL << 54)\n#define C (x << 2)\n");
        assert_eq!(c.get("B"), Some(&(1 << 54)));
        assert!(!c.contains_key("C"));
    }
}
