//! The KFD ioctl ABI of `include/uapi/linux/kfd_ioctl.h` (interface 1.17, Linux 6.12):
//! argument structs named as in the header, flags and constants, typed request
//! numbers, and the kernel's table of every command ([`COMMANDS`]).
//!
//! Layouts are pinned twice: `const` size assertions here, and a test that compiles a C
//! program against that header (a copy is in `vendor/linux/kfd_ioctl.h`) and
//! compares every size, field offset and request number (`tests/abi_layout.rs`).
//!
//! The kernel takes every command at any argument size (the size is part of the
//! request number): it copies what the caller passed, zero-fills the rest of its own
//! struct and copies back the caller's size (`kfd_ioctl()` in `kfd_chardev.c`). So an
//! older header's smaller struct (interface 1.11's 88-byte `CREATE_QUEUE`) works
//! against a newer kernel, the new fields reading as zero.

#![allow(non_camel_case_types, non_snake_case)]

use std::marker::PhantomData;

use zerocopy::{FromBytes, IntoBytes};

/// `KFD_IOCTL_MAJOR_VERSION`
pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;
/// `KFD_IOCTL_MINOR_VERSION` of the header this ABI follows.
pub const KFD_IOCTL_MINOR_VERSION: u32 = 17;

pub use amd_regs::layout::{FieldLayout, StructLayout};

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_GET_VERSION`
    pub struct kfd_ioctl_get_version_args {
        /// from KFD
        pub major_version: u32,
        /// from KFD
        pub minor_version: u32,
    }
    size = 8;
}

/// `KFD_IOC_QUEUE_TYPE_COMPUTE`: a PM4 compute queue.
pub const KFD_IOC_QUEUE_TYPE_COMPUTE: u32 = 0x0;
/// `KFD_IOC_QUEUE_TYPE_SDMA`
pub const KFD_IOC_QUEUE_TYPE_SDMA: u32 = 0x1;
/// `KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`
pub const KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: u32 = 0x2;
/// `KFD_IOC_QUEUE_TYPE_SDMA_XGMI`
pub const KFD_IOC_QUEUE_TYPE_SDMA_XGMI: u32 = 0x3;
/// `KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID` (interface 1.17): an SDMA queue on the engine
/// `sdma_engine_id` names.
pub const KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: u32 = 0x4;
/// `KFD_MAX_QUEUE_PERCENTAGE`
pub const KFD_MAX_QUEUE_PERCENTAGE: u32 = 100;
/// `KFD_MAX_QUEUE_PRIORITY`
pub const KFD_MAX_QUEUE_PRIORITY: u32 = 15;
/// `KFD_MIN_QUEUE_RING_SIZE`
pub const KFD_MIN_QUEUE_RING_SIZE: u32 = 1024;

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_CREATE_QUEUE`
    pub struct kfd_ioctl_create_queue_args {
        /// to KFD
        pub ring_base_address: u64,
        /// to KFD (where the runtime keeps the write pointer)
        pub write_pointer_address: u64,
        /// to KFD (where the CP keeps the read pointer)
        pub read_pointer_address: u64,
        /// from KFD
        pub doorbell_offset: u64,
        /// to KFD, bytes
        pub ring_size: u32,
        /// to KFD
        pub gpu_id: u32,
        /// to KFD
        pub queue_type: u32,
        /// to KFD
        pub queue_percentage: u32,
        /// to KFD
        pub queue_priority: u32,
        /// from KFD
        pub queue_id: u32,
        /// to KFD
        pub eop_buffer_address: u64,
        /// to KFD
        pub eop_buffer_size: u64,
        /// to KFD
        pub ctx_save_restore_address: u64,
        /// to KFD
        pub ctx_save_restore_size: u32,
        /// to KFD
        pub ctl_stack_size: u32,
        /// to KFD: the SDMA engine of an SDMA queue (interface 1.17; 0 is engine 0)
        pub sdma_engine_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 96;
}

/// `sizeof(struct kfd_ioctl_create_queue_args)` before interface 1.17 (no
/// `sdma_engine_id`), as older headers and clients pass it.
pub const KFD_CREATE_QUEUE_ARGS_SIZE_1_11: usize = 88;

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_DESTROY_QUEUE`
    pub struct kfd_ioctl_destroy_queue_args {
        /// to KFD
        pub queue_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 8;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_UPDATE_QUEUE`
    pub struct kfd_ioctl_update_queue_args {
        /// to KFD
        pub ring_base_address: u64,
        /// to KFD
        pub queue_id: u32,
        /// to KFD
        pub ring_size: u32,
        /// to KFD
        pub queue_percentage: u32,
        /// to KFD
        pub queue_priority: u32,
    }
    size = 24;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_SET_CU_MASK`
    pub struct kfd_ioctl_set_cu_mask_args {
        /// to KFD
        pub queue_id: u32,
        /// to KFD: bits in the mask (a multiple of 32)
        pub num_cu_mask: u32,
        /// to KFD: pointer to `num_cu_mask / 32` u32 words
        pub cu_mask_ptr: u64,
    }
    size = 16;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_GET_QUEUE_WAVE_STATE`
    pub struct kfd_ioctl_get_queue_wave_state_args {
        /// to KFD
        pub ctl_stack_address: u64,
        /// from KFD
        pub ctl_stack_used_size: u32,
        /// from KFD
        pub save_area_used_size: u32,
        /// to KFD
        pub queue_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 24;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_AVAILABLE_MEMORY`
    pub struct kfd_ioctl_get_available_memory_args {
        /// from KFD, bytes
        pub available: u64,
        /// to KFD
        pub gpu_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 16;
}

/// `KFD_IOC_CACHE_POLICY_COHERENT`
pub const KFD_IOC_CACHE_POLICY_COHERENT: u32 = 0;
/// `KFD_IOC_CACHE_POLICY_NONCOHERENT`
pub const KFD_IOC_CACHE_POLICY_NONCOHERENT: u32 = 1;

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_SET_MEMORY_POLICY`
    pub struct kfd_ioctl_set_memory_policy_args {
        /// to KFD
        pub alternate_aperture_base: u64,
        /// to KFD
        pub alternate_aperture_size: u64,
        /// to KFD
        pub gpu_id: u32,
        /// to KFD
        pub default_policy: u32,
        /// to KFD
        pub alternate_policy: u32,
        /// padding
        pub pad: u32,
    }
    size = 32;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_GET_TILE_CONFIG`: the GPU's tiling configuration (ROCr's image
    /// support asks for it).
    pub struct kfd_ioctl_get_tile_config_args {
        /// to KFD: where the tile mode array goes
        pub tile_config_ptr: u64,
        /// to KFD: where the macro tile mode array goes
        pub macro_tile_config_ptr: u64,
        /// to KFD: the array's room; from KFD: entries written
        pub num_tile_configs: u32,
        /// to KFD: the array's room; from KFD: entries written
        pub num_macro_tile_configs: u32,
        /// to KFD
        pub gpu_id: u32,
        /// from KFD: GB_ADDR_CONFIG
        pub gb_addr_config: u32,
        /// from KFD (not set from gfx9 on: 0)
        pub num_banks: u32,
        /// from KFD (not set from gfx9 on: 0)
        pub num_ranks: u32,
    }
    size = 40;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_GET_CLOCK_COUNTERS`
    pub struct kfd_ioctl_get_clock_counters_args {
        /// from KFD
        pub gpu_clock_counter: u64,
        /// from KFD
        pub cpu_clock_counter: u64,
        /// from KFD
        pub system_clock_counter: u64,
        /// from KFD, Hz
        pub system_clock_freq: u64,
        /// to KFD
        pub gpu_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 40;
}

amd_regs::abi_struct! {
    /// One GPU's apertures, filled by `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`.
    pub struct kfd_process_device_apertures {
        /// from KFD
        pub lds_base: u64,
        /// from KFD
        pub lds_limit: u64,
        /// from KFD
        pub scratch_base: u64,
        /// from KFD
        pub scratch_limit: u64,
        /// from KFD
        pub gpuvm_base: u64,
        /// from KFD
        pub gpuvm_limit: u64,
        /// from KFD
        pub gpu_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 56;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW`
    pub struct kfd_ioctl_get_process_apertures_new_args {
        /// to KFD: pointer to `num_of_nodes` [`kfd_process_device_apertures`]
        pub kfd_process_device_apertures_ptr: u64,
        /// to KFD: room in the array; from KFD: entries filled
        pub num_of_nodes: u32,
        /// padding
        pub pad: u32,
    }
    size = 16;
}

/// `KFD_INVALID_FD`
pub const KFD_INVALID_FD: u32 = 0xffff_ffff;

/// `KFD_IOC_EVENT_SIGNAL`
pub const KFD_IOC_EVENT_SIGNAL: u32 = 0;
/// `KFD_IOC_EVENT_NODECHANGE`
pub const KFD_IOC_EVENT_NODECHANGE: u32 = 1;
/// `KFD_IOC_EVENT_DEVICESTATECHANGE`
pub const KFD_IOC_EVENT_DEVICESTATECHANGE: u32 = 2;
/// `KFD_IOC_EVENT_HW_EXCEPTION`
pub const KFD_IOC_EVENT_HW_EXCEPTION: u32 = 3;
/// `KFD_IOC_EVENT_SYSTEM_EVENT`
pub const KFD_IOC_EVENT_SYSTEM_EVENT: u32 = 4;
/// `KFD_IOC_EVENT_DEBUG_EVENT`
pub const KFD_IOC_EVENT_DEBUG_EVENT: u32 = 5;
/// `KFD_IOC_EVENT_PROFILE_EVENT`
pub const KFD_IOC_EVENT_PROFILE_EVENT: u32 = 6;
/// `KFD_IOC_EVENT_QUEUE_EVENT`
pub const KFD_IOC_EVENT_QUEUE_EVENT: u32 = 7;
/// `KFD_IOC_EVENT_MEMORY`
pub const KFD_IOC_EVENT_MEMORY: u32 = 8;

/// `KFD_IOC_WAIT_RESULT_COMPLETE`
pub const KFD_IOC_WAIT_RESULT_COMPLETE: u32 = 0;
/// `KFD_IOC_WAIT_RESULT_TIMEOUT`
pub const KFD_IOC_WAIT_RESULT_TIMEOUT: u32 = 1;
/// `KFD_IOC_WAIT_RESULT_FAIL`
pub const KFD_IOC_WAIT_RESULT_FAIL: u32 = 2;

/// `KFD_SIGNAL_EVENT_LIMIT`: signal event slots in the event page.
pub const KFD_SIGNAL_EVENT_LIMIT: u32 = 4096;

/// `KFD_HW_EXCEPTION_WHOLE_GPU_RESET`
pub const KFD_HW_EXCEPTION_WHOLE_GPU_RESET: u32 = 0;
/// `KFD_HW_EXCEPTION_PER_ENGINE_RESET`
pub const KFD_HW_EXCEPTION_PER_ENGINE_RESET: u32 = 1;
/// `KFD_HW_EXCEPTION_GPU_HANG`
pub const KFD_HW_EXCEPTION_GPU_HANG: u32 = 0;
/// `KFD_HW_EXCEPTION_ECC`
pub const KFD_HW_EXCEPTION_ECC: u32 = 1;

/// `KFD_MEM_ERR_NO_RAS`
pub const KFD_MEM_ERR_NO_RAS: u32 = 0;
/// `KFD_MEM_ERR_SRAM_ECC`
pub const KFD_MEM_ERR_SRAM_ECC: u32 = 1;
/// `KFD_MEM_ERR_POISON_CONSUMED`
pub const KFD_MEM_ERR_POISON_CONSUMED: u32 = 2;
/// `KFD_MEM_ERR_GPU_HANG`
pub const KFD_MEM_ERR_GPU_HANG: u32 = 3;

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_CREATE_EVENT`
    pub struct kfd_ioctl_create_event_args {
        /// to KFD on the first call: the event page's memory handle; from KFD: its
        /// mmap offset
        pub event_page_offset: u64,
        /// from KFD, signal events only
        pub event_trigger_data: u32,
        /// to KFD
        pub event_type: u32,
        /// to KFD
        pub auto_reset: u32,
        /// to KFD, for some event types
        pub node_id: u32,
        /// from KFD
        pub event_id: u32,
        /// from KFD: the event's 8-byte slot in the event page
        pub event_slot_index: u32,
    }
    size = 32;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_DESTROY_EVENT`
    pub struct kfd_ioctl_destroy_event_args {
        /// to KFD
        pub event_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 8;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_SET_EVENT`
    pub struct kfd_ioctl_set_event_args {
        /// to KFD
        pub event_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 8;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_RESET_EVENT`
    pub struct kfd_ioctl_reset_event_args {
        /// to KFD
        pub event_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 8;
}

amd_regs::abi_struct! {
    /// Why a memory access faulted.
    pub struct kfd_memory_exception_failure {
        /// Page not present or supervisor privilege.
        pub NotPresent: u32,
        /// Write access to a read-only page.
        pub ReadOnly: u32,
        /// Execute access to a page marked NX.
        pub NoExecute: u32,
        /// The exact fault address is unknown.
        pub imprecise: u32,
    }
    size = 16;
}

amd_regs::abi_struct! {
    /// Memory exception data of a `KFD_IOC_EVENT_MEMORY` event.
    pub struct kfd_hsa_memory_exception_data {
        /// What went wrong.
        pub failure: kfd_memory_exception_failure,
        /// Faulting virtual address.
        pub va: u64,
        /// GPU that faulted (0: none).
        pub gpu_id: u32,
        /// `KFD_MEM_ERR_*`
        pub ErrorType: u32,
    }
    size = 32;
}

amd_regs::abi_struct! {
    /// Hardware exception data of a `KFD_IOC_EVENT_HW_EXCEPTION` event.
    pub struct kfd_hsa_hw_exception_data {
        /// `KFD_HW_EXCEPTION_*_RESET`
        pub reset_type: u32,
        /// `KFD_HW_EXCEPTION_GPU_HANG` / `_ECC`
        pub reset_cause: u32,
        /// Whether memory was lost.
        pub memory_lost: u32,
        /// GPU (0: none).
        pub gpu_id: u32,
    }
    size = 16;
}

amd_regs::abi_struct! {
    /// One entry of the `AMDKFD_IOC_WAIT_EVENTS` array. The header's anonymous union
    /// of `memory_exception_data` and `hw_exception_data` is held as the larger member;
    /// [`kfd_event_data::hw_exception_data`] reads the other view.
    pub struct kfd_event_data {
        /// from KFD (union with `hw_exception_data`)
        pub memory_exception_data: kfd_hsa_memory_exception_data,
        /// pointer to an extension structure
        pub kfd_event_data_ext: u64,
        /// to KFD
        pub event_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 48;
}

impl kfd_event_data {
    /// An entry waiting on `event_id`.
    pub fn for_event(event_id: u32) -> Self {
        kfd_event_data {
            event_id,
            ..Default::default()
        }
    }

    /// The union read as `hw_exception_data`.
    pub fn hw_exception_data(&self) -> kfd_hsa_hw_exception_data {
        let bytes = self.memory_exception_data.as_bytes();
        // The union's first 16 bytes are the hw view; `read_from_prefix` only fails on
        // a shorter slice, and the memory view is 32 bytes.
        kfd_hsa_hw_exception_data::read_from_prefix(bytes)
            .map(|(v, _)| v)
            .unwrap_or_default()
    }

    /// Writes the union as `hw_exception_data` (the rest of the union is zeroed).
    pub fn set_hw_exception_data(&mut self, hw: kfd_hsa_hw_exception_data) {
        let mut bytes = [0u8; 32];
        bytes[..16].copy_from_slice(hw.as_bytes());
        self.memory_exception_data = kfd_hsa_memory_exception_data::read_from_bytes(&bytes[..]).unwrap_or_default();
    }
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_WAIT_EVENTS`
    pub struct kfd_ioctl_wait_events_args {
        /// to KFD: pointer to `num_events` [`kfd_event_data`]
        pub events_ptr: u64,
        /// to KFD
        pub num_events: u32,
        /// to KFD
        pub wait_for_all: u32,
        /// to KFD, milliseconds
        pub timeout: u32,
        /// from KFD: `KFD_IOC_WAIT_RESULT_*`
        pub wait_result: u32,
    }
    size = 24;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_SET_SCRATCH_BACKING_VA`
    pub struct kfd_ioctl_set_scratch_backing_va_args {
        /// to KFD
        pub va_addr: u64,
        /// to KFD
        pub gpu_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 16;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_SET_TRAP_HANDLER`
    pub struct kfd_ioctl_set_trap_handler_args {
        /// to KFD
        pub tba_addr: u64,
        /// to KFD
        pub tma_addr: u64,
        /// to KFD
        pub gpu_id: u32,
        /// padding
        pub pad: u32,
    }
    size = 24;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_ACQUIRE_VM`
    pub struct kfd_ioctl_acquire_vm_args {
        /// to KFD: the render node's file descriptor
        pub drm_fd: u32,
        /// to KFD
        pub gpu_id: u32,
    }
    size = 8;
}

/// `KFD_IOC_ALLOC_MEM_FLAGS_VRAM`
pub const KFD_IOC_ALLOC_MEM_FLAGS_VRAM: u32 = 1 << 0;
/// `KFD_IOC_ALLOC_MEM_FLAGS_GTT`
pub const KFD_IOC_ALLOC_MEM_FLAGS_GTT: u32 = 1 << 1;
/// `KFD_IOC_ALLOC_MEM_FLAGS_USERPTR`
pub const KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: u32 = 1 << 2;
/// `KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL`
pub const KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: u32 = 1 << 3;
/// `KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP`
pub const KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: u32 = 1 << 4;
/// `KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE`
pub const KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE: u32 = 1 << 31;
/// `KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE`
pub const KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE: u32 = 1 << 30;
/// `KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC`
pub const KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC: u32 = 1 << 29;
/// `KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE`
pub const KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE: u32 = 1 << 28;
/// `KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM`
pub const KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM: u32 = 1 << 27;
/// `KFD_IOC_ALLOC_MEM_FLAGS_COHERENT`
pub const KFD_IOC_ALLOC_MEM_FLAGS_COHERENT: u32 = 1 << 26;
/// `KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED`
pub const KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED: u32 = 1 << 25;

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`
    pub struct kfd_ioctl_alloc_memory_of_gpu_args {
        /// to KFD: GPU virtual address (the same on every GPU)
        pub va_addr: u64,
        /// to KFD, bytes
        pub size: u64,
        /// from KFD
        pub handle: u64,
        /// to KFD (userptr: the CPU address); from KFD (render-node mmap offset)
        pub mmap_offset: u64,
        /// to KFD
        pub gpu_id: u32,
        /// `KFD_IOC_ALLOC_MEM_FLAGS_*`
        pub flags: u32,
    }
    size = 40;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_FREE_MEMORY_OF_GPU`
    pub struct kfd_ioctl_free_memory_of_gpu_args {
        /// to KFD
        pub handle: u64,
    }
    size = 8;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_MAP_MEMORY_TO_GPU`
    pub struct kfd_ioctl_map_memory_to_gpu_args {
        /// to KFD
        pub handle: u64,
        /// to KFD: pointer to `n_devices` u32 gpu ids
        pub device_ids_array_ptr: u64,
        /// to KFD
        pub n_devices: u32,
        /// to/from KFD: devices mapped so far
        pub n_success: u32,
    }
    size = 24;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU`
    pub struct kfd_ioctl_unmap_memory_from_gpu_args {
        /// to KFD
        pub handle: u64,
        /// to KFD: pointer to `n_devices` u32 gpu ids
        pub device_ids_array_ptr: u64,
        /// to KFD
        pub n_devices: u32,
        /// to/from KFD: devices unmapped so far
        pub n_success: u32,
    }
    size = 24;
}

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_SET_XNACK_MODE`
    pub struct kfd_ioctl_set_xnack_mode_args {
        /// to/from KFD (negative: query)
        pub xnack_enabled: i32,
    }
    size = 4;
}

/// `KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK`: turn the debugger's runtime on (else off).
pub const KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK: u32 = 1;
/// `KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK`: save trap temporaries.
pub const KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK: u32 = 2;

amd_regs::abi_struct! {
    /// `AMDKFD_IOC_RUNTIME_ENABLE` (interface 1.13): the runtime tells KFD it runs
    /// (or no longer runs) under a debugger's eye.
    pub struct kfd_ioctl_runtime_enable_args {
        /// to KFD: the runtime's `r_debug` address
        pub r_debug: u64,
        /// to KFD: `KFD_RUNTIME_ENABLE_MODE_*`
        pub mode_mask: u32,
        /// from KFD: `KFD_RUNTIME_ENABLE_CAPS_*`
        pub capabilities_mask: u32,
    }
    size = 16;
}

/// Every ABI struct, for the layout test.
pub const STRUCTS: &[StructLayout] = &[
    kfd_ioctl_runtime_enable_args::LAYOUT,
    kfd_ioctl_get_version_args::LAYOUT,
    kfd_ioctl_create_queue_args::LAYOUT,
    kfd_ioctl_destroy_queue_args::LAYOUT,
    kfd_ioctl_update_queue_args::LAYOUT,
    kfd_ioctl_set_cu_mask_args::LAYOUT,
    kfd_ioctl_get_queue_wave_state_args::LAYOUT,
    kfd_ioctl_get_available_memory_args::LAYOUT,
    kfd_ioctl_set_memory_policy_args::LAYOUT,
    kfd_ioctl_get_clock_counters_args::LAYOUT,
    kfd_ioctl_get_tile_config_args::LAYOUT,
    kfd_process_device_apertures::LAYOUT,
    kfd_ioctl_get_process_apertures_new_args::LAYOUT,
    kfd_ioctl_create_event_args::LAYOUT,
    kfd_ioctl_destroy_event_args::LAYOUT,
    kfd_ioctl_set_event_args::LAYOUT,
    kfd_ioctl_reset_event_args::LAYOUT,
    kfd_memory_exception_failure::LAYOUT,
    kfd_hsa_memory_exception_data::LAYOUT,
    kfd_hsa_hw_exception_data::LAYOUT,
    kfd_event_data::LAYOUT,
    kfd_ioctl_wait_events_args::LAYOUT,
    kfd_ioctl_set_scratch_backing_va_args::LAYOUT,
    kfd_ioctl_set_trap_handler_args::LAYOUT,
    kfd_ioctl_acquire_vm_args::LAYOUT,
    kfd_ioctl_alloc_memory_of_gpu_args::LAYOUT,
    kfd_ioctl_free_memory_of_gpu_args::LAYOUT,
    kfd_ioctl_map_memory_to_gpu_args::LAYOUT,
    kfd_ioctl_unmap_memory_from_gpu_args::LAYOUT,
    kfd_ioctl_set_xnack_mode_args::LAYOUT,
];

// ---------------------------------------------------------------------------------
// Request numbers (asm-generic/ioctl.h: nr 0..8, type 8..16, size 16..30, dir 30..32).

/// Linux's ioctl request numbers (`asm-generic/ioctl.h`): the command number in bits
/// 0..8, the type in 8..16, the argument's size in 16..30, the direction in 30..32.
/// Every ioctl the transports make and the mock answers (KFD, DRM, VFIO) is numbered
/// so.
pub mod ioc {
    /// `_IOC_WRITE`: the kernel copies the argument in.
    pub const WRITE: u64 = 1;
    /// `_IOC_READ`: the kernel copies the argument back out.
    pub const READ: u64 = 2;

    /// `_IOC(dir, ty, nr, size)`.
    pub const fn request(dir: u64, ty: u8, nr: u8, size: usize) -> u64 {
        (dir << 30) | (((size & 0x3fff) as u64) << 16) | ((ty as u64) << 8) | nr as u64
    }

    /// `_IOC_NR`: the command number.
    pub const fn nr(request: u64) -> u8 {
        request as u8
    }

    /// `_IOC_TYPE`: the driver's letter.
    pub const fn ty(request: u64) -> u8 {
        (request >> 8) as u8
    }

    /// `_IOC_SIZE`: the argument's size in bytes.
    pub const fn size(request: u64) -> usize {
        ((request >> 16) & 0x3fff) as usize
    }

    /// `_IOC_DIR`: [`WRITE`], [`READ`], both or neither.
    pub const fn dir(request: u64) -> u64 {
        (request >> 30) & 3
    }
}

use ioc::{READ as IOC_READ, WRITE as IOC_WRITE};

/// `AMDKFD_IOCTL_BASE`
pub const AMDKFD_IOCTL_BASE: u8 = b'K';

const fn kfd_ioc(dir: u64, nr: u8, size: usize) -> u64 {
    ioc::request(dir, AMDKFD_IOCTL_BASE, nr, size)
}

/// A KFD ioctl request whose argument is a `T`.
#[derive(Debug)]
pub struct Ioctl<T> {
    /// The request number passed to `ioctl(2)`.
    pub request: u64,
    /// Its name in the header (`AMDKFD_IOC_…`).
    pub name: &'static str,
    _arg: PhantomData<fn(&mut T)>,
}

impl<T> Clone for Ioctl<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Ioctl<T> {}

impl<T> Ioctl<T> {
    /// The command number (`_IOC_NR`).
    pub const fn nr(&self) -> u8 {
        self.request as u8
    }
}

/// Argument structs that carry no pointer to other user memory: their ioctls are safe
/// to issue with nothing more than a valid struct.
pub trait NoUserPointers {}

macro_rules! ioctls {
    ($($(#[$m:meta])* $name:ident = $dir:ident($nr:literal, $t:ident) $(, $safe:ident)?;)*) => {
        $(
            $(#[$m])*
            #[doc = concat!("`", stringify!($name), "`: `", stringify!($t), "`.")]
            pub const $name: Ioctl<$t> = Ioctl {
                request: kfd_ioc(ioctls!(@dir $dir), $nr, std::mem::size_of::<$t>()),
                name: stringify!($name),
                _arg: PhantomData,
            };
            $(ioctls!(@safe $safe $t);)?
        )*

        /// Every request: (name, number), for the layout test.
        pub const REQUESTS: &[(&str, u64)] = &[$((stringify!($name), $name.request),)*];
    };
    (@dir R) => { IOC_READ };
    (@dir W) => { IOC_WRITE };
    (@dir WR) => { IOC_READ | IOC_WRITE };
    (@safe plain $t:ident) => { impl NoUserPointers for $t {} };
}

ioctls! {
    AMDKFD_IOC_GET_VERSION = R(0x01, kfd_ioctl_get_version_args), plain;
    AMDKFD_IOC_CREATE_QUEUE = WR(0x02, kfd_ioctl_create_queue_args), plain;
    AMDKFD_IOC_DESTROY_QUEUE = WR(0x03, kfd_ioctl_destroy_queue_args), plain;
    AMDKFD_IOC_SET_MEMORY_POLICY = W(0x04, kfd_ioctl_set_memory_policy_args), plain;
    AMDKFD_IOC_GET_CLOCK_COUNTERS = WR(0x05, kfd_ioctl_get_clock_counters_args), plain;
    AMDKFD_IOC_UPDATE_QUEUE = W(0x07, kfd_ioctl_update_queue_args), plain;
    AMDKFD_IOC_CREATE_EVENT = WR(0x08, kfd_ioctl_create_event_args), plain;
    AMDKFD_IOC_DESTROY_EVENT = W(0x09, kfd_ioctl_destroy_event_args), plain;
    AMDKFD_IOC_SET_EVENT = W(0x0A, kfd_ioctl_set_event_args), plain;
    AMDKFD_IOC_RESET_EVENT = W(0x0B, kfd_ioctl_reset_event_args), plain;
    AMDKFD_IOC_WAIT_EVENTS = WR(0x0C, kfd_ioctl_wait_events_args);
    AMDKFD_IOC_SET_SCRATCH_BACKING_VA = WR(0x11, kfd_ioctl_set_scratch_backing_va_args), plain;
    AMDKFD_IOC_GET_TILE_CONFIG = WR(0x12, kfd_ioctl_get_tile_config_args);
    AMDKFD_IOC_SET_TRAP_HANDLER = W(0x13, kfd_ioctl_set_trap_handler_args), plain;
    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW = WR(0x14, kfd_ioctl_get_process_apertures_new_args);
    AMDKFD_IOC_ACQUIRE_VM = W(0x15, kfd_ioctl_acquire_vm_args), plain;
    AMDKFD_IOC_ALLOC_MEMORY_OF_GPU = WR(0x16, kfd_ioctl_alloc_memory_of_gpu_args), plain;
    AMDKFD_IOC_FREE_MEMORY_OF_GPU = W(0x17, kfd_ioctl_free_memory_of_gpu_args), plain;
    AMDKFD_IOC_MAP_MEMORY_TO_GPU = WR(0x18, kfd_ioctl_map_memory_to_gpu_args);
    AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU = WR(0x19, kfd_ioctl_unmap_memory_from_gpu_args);
    AMDKFD_IOC_SET_CU_MASK = W(0x1A, kfd_ioctl_set_cu_mask_args);
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE = WR(0x1B, kfd_ioctl_get_queue_wave_state_args);
    AMDKFD_IOC_SET_XNACK_MODE = WR(0x21, kfd_ioctl_set_xnack_mode_args), plain;
    AMDKFD_IOC_AVAILABLE_MEMORY = WR(0x23, kfd_ioctl_get_available_memory_args), plain;
    AMDKFD_IOC_RUNTIME_ENABLE = WR(0x25, kfd_ioctl_runtime_enable_args), plain;
}

/// One command of the kernel's table (`amdkfd_ioctls[]` in `kfd_chardev.c`): its
/// number, name and the request number of the current header, whose size is the
/// kernel's own struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KfdCommand {
    /// Name in the header (`AMDKFD_IOC_…`).
    pub name: &'static str,
    /// The request number of the current header.
    pub request: u64,
}

impl KfdCommand {
    /// `_IOC_NR`.
    pub const fn nr(&self) -> u8 {
        ioc::nr(self.request)
    }
    /// `_IOC_SIZE`: the size of the kernel's argument struct.
    pub const fn size(&self) -> usize {
        ioc::size(self.request)
    }
    /// The kernel copies the caller's argument in (`_IOC_WRITE`).
    pub const fn copies_in(&self) -> bool {
        ioc::dir(self.request) & IOC_WRITE != 0
    }
    /// The kernel copies the argument back out (`_IOC_READ`).
    pub const fn copies_out(&self) -> bool {
        ioc::dir(self.request) & IOC_READ != 0
    }
}

macro_rules! commands {
    ($($name:ident = $dir:ident($nr:literal, $size:literal);)*) => {
        /// Every command of interface 1.17, in number order (`AMDKFD_COMMAND_START`
        /// 0x01 to `AMDKFD_COMMAND_END` 0x27, exclusive): `COMMANDS[nr - 1]`.
        pub const COMMANDS: &[KfdCommand] = &[$(KfdCommand {
            name: stringify!($name),
            request: kfd_ioc(ioctls!(@dir $dir), $nr, $size),
        },)*];
    };
}

commands! {
    AMDKFD_IOC_GET_VERSION = R(0x01, 8);
    AMDKFD_IOC_CREATE_QUEUE = WR(0x02, 96);
    AMDKFD_IOC_DESTROY_QUEUE = WR(0x03, 8);
    AMDKFD_IOC_SET_MEMORY_POLICY = W(0x04, 32);
    AMDKFD_IOC_GET_CLOCK_COUNTERS = WR(0x05, 40);
    AMDKFD_IOC_GET_PROCESS_APERTURES = R(0x06, 400);
    AMDKFD_IOC_UPDATE_QUEUE = W(0x07, 24);
    AMDKFD_IOC_CREATE_EVENT = WR(0x08, 32);
    AMDKFD_IOC_DESTROY_EVENT = W(0x09, 8);
    AMDKFD_IOC_SET_EVENT = W(0x0A, 8);
    AMDKFD_IOC_RESET_EVENT = W(0x0B, 8);
    AMDKFD_IOC_WAIT_EVENTS = WR(0x0C, 24);
    AMDKFD_IOC_DBG_REGISTER_DEPRECATED = W(0x0D, 8);
    AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED = W(0x0E, 8);
    AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED = W(0x0F, 16);
    AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED = W(0x10, 16);
    AMDKFD_IOC_SET_SCRATCH_BACKING_VA = WR(0x11, 16);
    AMDKFD_IOC_GET_TILE_CONFIG = WR(0x12, 40);
    AMDKFD_IOC_SET_TRAP_HANDLER = W(0x13, 24);
    AMDKFD_IOC_GET_PROCESS_APERTURES_NEW = WR(0x14, 16);
    AMDKFD_IOC_ACQUIRE_VM = W(0x15, 8);
    AMDKFD_IOC_ALLOC_MEMORY_OF_GPU = WR(0x16, 40);
    AMDKFD_IOC_FREE_MEMORY_OF_GPU = W(0x17, 8);
    AMDKFD_IOC_MAP_MEMORY_TO_GPU = WR(0x18, 24);
    AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU = WR(0x19, 24);
    AMDKFD_IOC_SET_CU_MASK = W(0x1A, 16);
    AMDKFD_IOC_GET_QUEUE_WAVE_STATE = WR(0x1B, 24);
    AMDKFD_IOC_GET_DMABUF_INFO = WR(0x1C, 32);
    AMDKFD_IOC_IMPORT_DMABUF = WR(0x1D, 24);
    AMDKFD_IOC_ALLOC_QUEUE_GWS = WR(0x1E, 16);
    AMDKFD_IOC_SMI_EVENTS = WR(0x1F, 8);
    AMDKFD_IOC_SVM = WR(0x20, 24);
    AMDKFD_IOC_SET_XNACK_MODE = WR(0x21, 4);
    AMDKFD_IOC_CRIU_OP = WR(0x22, 56);
    AMDKFD_IOC_AVAILABLE_MEMORY = WR(0x23, 16);
    AMDKFD_IOC_EXPORT_DMABUF = WR(0x24, 16);
    AMDKFD_IOC_RUNTIME_ENABLE = WR(0x25, 16);
    AMDKFD_IOC_DBG_TRAP = WR(0x26, 32);
}

/// The kernel's command of number `_IOC_NR(request)`, whatever the request's size
/// and direction bits (the kernel reads only the number; `None` where it answers
/// ENOTTY).
pub fn command(request: u64) -> Option<&'static KfdCommand> {
    usize::from(ioc::nr(request))
        .checked_sub(1)
        .and_then(|i| COMMANDS.get(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_are_linuxs() {
        // _IOR('K', 0x01, struct kfd_ioctl_get_version_args): AMDKFD_IOC_GET_VERSION.
        let r = ioc::request(ioc::READ, b'K', 0x01, 8);
        assert_eq!(r, 0x8008_4b01);
        assert_eq!(
            (ioc::dir(r), ioc::ty(r), ioc::nr(r), ioc::size(r)),
            (ioc::READ, b'K', 1, 8)
        );
        // _IOWR('d', 0x00, struct drm_version), 64 bytes: DRM_IOCTL_VERSION.
        assert_eq!(ioc::request(ioc::READ | ioc::WRITE, b'd', 0, 64), 0xc040_6400);
        // The size field is 14 bits.
        assert_eq!(ioc::size(ioc::request(ioc::WRITE, b'K', 2, 0x4000 + 24)), 24);
    }

    #[test]
    fn request_numbers_follow_the_generic_encoding() {
        // _IOR('K', 1, 8) and _IOWR('K', 0x16, 40) computed by hand.
        assert_eq!(AMDKFD_IOC_GET_VERSION.request, 0x8008_4b01);
        assert_eq!(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request, 0xc028_4b16);
        assert_eq!(AMDKFD_IOC_ACQUIRE_VM.nr(), 0x15);
    }

    #[test]
    fn the_command_table_is_in_number_order_and_agrees_with_the_typed_requests() {
        for (i, c) in COMMANDS.iter().enumerate() {
            assert_eq!(c.nr() as usize, i + 1, "{}", c.name);
        }
        for (name, req) in REQUESTS {
            let c = command(*req).unwrap();
            assert_eq!((c.name, c.request), (*name, *req));
        }
        // Another size or direction names the same command; 0 and 0x27 none.
        let old = (AMDKFD_IOC_CREATE_QUEUE.request & !(0x3fff << 16)) | (88 << 16);
        assert_eq!(command(old).unwrap().size(), 96);
        assert!(command(0x4b00).is_none() && command(0x4b27).is_none());
        assert!(!command(AMDKFD_IOC_GET_VERSION.request).unwrap().copies_in());
    }

    #[test]
    fn event_data_union_views() {
        let mut ev = kfd_event_data::for_event(3);
        let hw = kfd_hsa_hw_exception_data {
            reset_type: 1,
            reset_cause: 0,
            memory_lost: 1,
            gpu_id: 7,
        };
        ev.set_hw_exception_data(hw);
        assert_eq!(ev.hw_exception_data(), hw);
        assert_eq!(ev.memory_exception_data.failure.NotPresent, 1);
        assert_eq!(ev.event_id, 3);
    }
}
