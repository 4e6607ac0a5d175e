//! The `/dev/kfd` ioctls of the mock driver: argument decoding, dispatch to the
//! driver state, and the copies to and from the caller's arrays.

#![allow(unsafe_code)]

use std::time::{Duration, Instant};

use amd_kfd::abi::*;
use nix::errno::Errno;
use zerocopy::{FromBytes, IntoBytes};

use amd_kfd::sys::{MapFlags, Prot, Sys};

use super::MockSys;
use crate::driver::Driver;
use crate::driver::uaccess::{self, with_arg};

impl MockSys {
    /// Makes the memory of GPU-only VRAM mapped to a GPU where the process mapped
    /// nothing (ROCr does not map VRAM the CPU cannot reach, as on a GPU without large
    /// BAR): anonymous pages at the buffer's address, over the process's reservation
    /// of it, as the card's VRAM is there without the CPU seeing it. (The CPU can
    /// reach them here, where it could not on the hardware.)
    fn back_vram(&self, d: &mut Driver, handle: u64) -> Result<(), Errno> {
        let Some(obj) = d.handles.get(&handle) else {
            return Ok(());
        };
        let gpu_only = obj.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM != 0 && obj.flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC == 0;
        let (Ok(va), Ok(size)) = (usize::try_from(obj.va), usize::try_from(obj.size)) else {
            return Err(Errno::EINVAL);
        };
        let end = va.checked_add(size).ok_or(Errno::EINVAL)?;
        if !gpu_only || obj.backed || d.engines.space.read().accessible.contains(va, end) {
            return Ok(());
        }
        let flags = MapFlags::PRIVATE.with(MapFlags::ANONYMOUS).with(MapFlags::FIXED);
        // SAFETY: FIXED over the buffer's own address range, which KFD requires the
        // process to have reserved for it and which it has not mapped through the
        // render node (the range is not memory the mock made): nothing of the
        // process's is replaced but its reservation.
        unsafe { self.host.mmap(va, size, Prot::ReadWrite, flags, None, 0) }.map_err(|e| e.errno)?;
        d.host_maps.insert(va, end);
        d.engines.space.write().accessible.insert(va, end);
        if let Some(obj) = d.handles.get_mut(&handle) {
            obj.backed = true;
        }
        Ok(())
    }

    /// Gives a freed buffer's range back as the process reserved it (inaccessible),
    /// where [`MockSys::back_vram`] made its memory.
    fn unback_vram(&self, d: &mut Driver, va: u64, size: u64) {
        let (Ok(va), Ok(size)) = (usize::try_from(va), usize::try_from(size)) else {
            return;
        };
        let end = va.saturating_add(size);
        if !d.host_maps.contains(va, end) {
            // The process unmapped it already: the range is no longer its to restore.
            return;
        }
        d.engines.space.write().accessible.remove(va, end);
        d.host_maps.remove(va, end);
        let flags = MapFlags::PRIVATE
            .with(MapFlags::ANONYMOUS)
            .with(MapFlags::NORESERVE)
            .with(MapFlags::FIXED);
        // SAFETY: the range the mock mapped in `back_vram`, still mapped (the mock's
        // record says so), no longer any GPU's (the buffer is freed) nor reachable
        // through the address space (removed above).
        let _ = unsafe { self.host.mmap(va, size, Prot::None, flags, None, 0) };
    }

    /// An ioctl on `/dev/kfd` as `kfd_ioctl()` in `kfd_chardev.c` takes it: the
    /// command is chosen by its number alone and its argument staged at the kernel's
    /// size ([`uaccess::staged`]), so an older or newer header's struct works; the
    /// kernel's own direction decides what is copied in and back.
    pub(crate) fn kfd_ioctl(&self, request: u64, user: &mut [u8]) -> Result<i32, Errno> {
        let cmd = amd_kfd::abi::command(request).ok_or(Errno::ENOTTY)?;
        let (user_size, copy_in, copy_out) = (uaccess::ioc_size(request), cmd.copies_in(), cmd.copies_out());
        uaccess::staged(user, user_size, cmd.size(), copy_in, copy_out, |arg| {
            self.kfd_command(cmd.request, arg)
        })?
    }

    /// One command with the kernel's own argument struct (`request` is the current
    /// header's number, `arg` exactly its struct).
    fn kfd_command(&self, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        let mut d = self.driver.lock();
        match request {
            r if r == AMDKFD_IOC_GET_VERSION.request => with_arg(arg, |a: &mut kfd_ioctl_get_version_args| {
                a.major_version = KFD_IOCTL_MAJOR_VERSION;
                a.minor_version = KFD_IOCTL_MINOR_VERSION;
                Ok(())
            })?,
            r if r == AMDKFD_IOC_ACQUIRE_VM.request => with_arg(arg, |a| d.acquire_vm(a))?,
            r if r == AMDKFD_IOC_RUNTIME_ENABLE.request => with_arg(arg, |a| d.runtime_enable(a))?,
            r if r == AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request => {
                let mut pin = None;
                with_arg(arg, |a: &mut kfd_ioctl_alloc_memory_of_gpu_args| {
                    d.alloc_memory(a)?;
                    if a.flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR != 0 {
                        pin = Some((a.va_addr, a.size));
                    }
                    Ok(())
                })?;
                if let Some((va, size)) = pin {
                    drop(d);
                    // The kernel pins a user-pointer allocation's pages when it makes
                    // it: they are faulted in now, not at the first copy through them.
                    // A range the process has not mapped stays as it is (the error is
                    // the kernel's to give at the GPU's first touch, as a fault).
                    if let (Ok(va), Ok(size)) = (usize::try_from(va), usize::try_from(size)) {
                        let _ = self.host.populate(va, size);
                    }
                    return Ok(0);
                }
            }
            r if r == AMDKFD_IOC_FREE_MEMORY_OF_GPU.request => {
                let mut backed = None;
                with_arg(arg, |a: &mut kfd_ioctl_free_memory_of_gpu_args| {
                    backed = d.handles.get(&a.handle).filter(|o| o.backed).map(|o| (o.va, o.size));
                    d.free_memory(a)
                })?;
                if let Some((va, size)) = backed {
                    self.unback_vram(&mut d, va, size);
                }
            }
            r if r == AMDKFD_IOC_MAP_MEMORY_TO_GPU.request || r == AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU.request => {
                let map = r == AMDKFD_IOC_MAP_MEMORY_TO_GPU.request;
                let mut mapped = None;
                with_arg(arg, |a: &mut kfd_ioctl_map_memory_to_gpu_args| {
                    mapped = map.then_some(a.handle);
                    if a.n_devices == 0 || a.n_success > a.n_devices {
                        return Err(Errno::EINVAL);
                    }
                    // SAFETY: `Sys::ioctl`'s contract: the caller's argument points at
                    // `n_devices` gpu ids.
                    let ids: Vec<u32> = unsafe { uaccess::read_array(a.device_ids_array_ptr, a.n_devices as usize) }?;
                    let (n, r) = d.map_memory(a.handle, &ids, a.n_success, map);
                    a.n_success = n;
                    r
                })?;
                if let Some(handle) = mapped {
                    self.back_vram(&mut d, handle)?;
                }
            }
            r if r == AMDKFD_IOC_CREATE_EVENT.request => with_arg(arg, |a| d.create_event(a))?,
            r if r == AMDKFD_IOC_DESTROY_EVENT.request => {
                with_arg(arg, |a: &mut kfd_ioctl_destroy_event_args| d.destroy_event(a.event_id))?
            }
            r if r == AMDKFD_IOC_SET_EVENT.request => {
                with_arg(arg, |a: &mut kfd_ioctl_set_event_args| d.set_event(a.event_id, true))?;
                self.events_changed.notify_all();
            }
            r if r == AMDKFD_IOC_RESET_EVENT.request => {
                with_arg(arg, |a: &mut kfd_ioctl_reset_event_args| d.set_event(a.event_id, false))?
            }
            r if r == AMDKFD_IOC_WAIT_EVENTS.request => {
                let mut a = kfd_ioctl_wait_events_args::read_from_bytes(arg).map_err(|_| Errno::EINVAL)?;
                if a.num_events == 0 {
                    return Err(Errno::EINVAL);
                }
                // SAFETY: `Sys::ioctl`'s contract: `events_ptr` points at `num_events`
                // entries, readable and writable.
                let mut entries: Vec<kfd_event_data> =
                    unsafe { uaccess::read_array(a.events_ptr, a.num_events as usize) }?;
                let deadline = match a.timeout {
                    0 => None,
                    u32::MAX => Some(None),
                    ms => Some(Some(Instant::now() + Duration::from_millis(ms as u64))),
                };
                a.wait_result = loop {
                    if self.mode == crate::ExecMode::Inline {
                        self.run_all_inline(&mut d);
                    }
                    if d.poll_events(&mut entries, a.wait_for_all != 0)? {
                        break KFD_IOC_WAIT_RESULT_COMPLETE;
                    }
                    match deadline {
                        None => break KFD_IOC_WAIT_RESULT_TIMEOUT,
                        Some(None) => self.events_changed.wait(&mut d),
                        Some(Some(t)) => {
                            if self.events_changed.wait_until(&mut d, t).timed_out()
                                && !d.poll_events(&mut entries, a.wait_for_all != 0)?
                            {
                                break KFD_IOC_WAIT_RESULT_TIMEOUT;
                            } else if Instant::now() >= t {
                                break KFD_IOC_WAIT_RESULT_COMPLETE;
                            }
                        }
                    }
                };
                // SAFETY: as above; the same array, written back whole.
                unsafe { uaccess::write_array(a.events_ptr, &entries) }?;
                arg.copy_from_slice(a.as_bytes());
            }
            r if r == AMDKFD_IOC_CREATE_QUEUE.request => with_arg(arg, |a| d.create_queue(a))?,
            r if r == AMDKFD_IOC_DESTROY_QUEUE.request => {
                {
                    let mut id = 0;
                    with_arg(arg, |a: &mut kfd_ioctl_destroy_queue_args| {
                        id = a.queue_id;
                        d.destroy_queue(a.queue_id)
                    })?;
                    // As KFD waits for the queue's preemption: its long operation stops at
                    // the end of its slice. A kernel executor that never yields is not
                    // waited for past the limit.
                    let limit = Instant::now() + Duration::from_secs(2);
                    while d.is_running(id) && !self.long_done.wait_until(&mut d, limit).timed_out() {}
                }
            }
            r if r == AMDKFD_IOC_UPDATE_QUEUE.request => with_arg(arg, |a| d.update_queue(a))?,
            r if r == AMDKFD_IOC_SET_CU_MASK.request => with_arg(arg, |a: &mut kfd_ioctl_set_cu_mask_args| {
                if a.num_cu_mask == 0 || a.num_cu_mask % 32 != 0 {
                    return Err(Errno::EINVAL);
                }
                // SAFETY: `Sys::ioctl`'s contract: `cu_mask_ptr` points at
                // `num_cu_mask / 32` words.
                let mask: Vec<u32> = unsafe { uaccess::read_array(a.cu_mask_ptr, a.num_cu_mask as usize / 32) }?;
                let q = d.queues.get_mut(&a.queue_id).ok_or(Errno::EINVAL)?;
                q.cu_mask = mask;
                Ok(())
            })?,
            // As `kfd_ioctl_get_tile_config` with gfx9+'s configuration: GB_ADDR_CONFIG,
            // the tile and macro tile mode arrays (32 and 16 entries, unused from gfx9
            // on: zeros) as far as the caller's room goes, no banks or ranks.
            r if r == AMDKFD_IOC_GET_TILE_CONFIG.request => {
                with_arg(arg, |a: &mut kfd_ioctl_get_tile_config_args| {
                    let g = d.gpu_index(a.gpu_id)?;
                    a.gb_addr_config = d.gb_addr_config(g);
                    (a.num_banks, a.num_ranks) = (0, 0);
                    a.num_tile_configs = a.num_tile_configs.min(32);
                    a.num_macro_tile_configs = a.num_macro_tile_configs.min(16);
                    // SAFETY: `Sys::ioctl`'s contract: the caller's arrays have the room
                    // it says.
                    unsafe { uaccess::write_array(a.tile_config_ptr, &vec![0u32; a.num_tile_configs as usize]) }?;
                    // SAFETY: as above.
                    unsafe {
                        uaccess::write_array(a.macro_tile_config_ptr, &vec![0u32; a.num_macro_tile_configs as usize])
                    }?;
                    Ok(())
                })?
            }
            r if r == AMDKFD_IOC_GET_CLOCK_COUNTERS.request => {
                with_arg(arg, |a: &mut kfd_ioctl_get_clock_counters_args| {
                    d.gpu_index(a.gpu_id)?;
                    let now = d.engines.clock_origin.elapsed().as_nanos() as u64;
                    a.gpu_clock_counter = d.gpu_clock();
                    a.cpu_clock_counter = now;
                    a.system_clock_counter = now;
                    a.system_clock_freq = 1_000_000_000;
                    Ok(())
                })?
            }
            r if r == AMDKFD_IOC_AVAILABLE_MEMORY.request => {
                with_arg(arg, |a: &mut kfd_ioctl_get_available_memory_args| {
                    let g = &d.gpus[d.gpu_index(a.gpu_id)?];
                    a.available = g.profile.vram_size - g.vram_used;
                    Ok(())
                })?
            }
            r if r == AMDKFD_IOC_GET_PROCESS_APERTURES_NEW.request => {
                with_arg(arg, |a: &mut kfd_ioctl_get_process_apertures_new_args| {
                    let all: Vec<kfd_process_device_apertures> = d
                        .gpus
                        .iter()
                        .map(|g| kfd_process_device_apertures {
                            lds_base: 0x1_0000_0000_0000,
                            lds_limit: 0x1_0000_ffff_ffff,
                            scratch_base: 0x2_0000_0000_0000,
                            scratch_limit: 0x2_0000_ffff_ffff,
                            gpuvm_base: 0x1_0000,
                            gpuvm_limit: 0x7fff_ffff_ffff,
                            gpu_id: g.gpu_id,
                            pad: 0,
                        })
                        .collect();
                    if a.num_of_nodes == 0 {
                        a.num_of_nodes = all.len() as u32;
                        return Ok(());
                    }
                    let n = (a.num_of_nodes as usize).min(all.len());
                    // SAFETY: `Sys::ioctl`'s contract: the pointer has room for
                    // `num_of_nodes` entries, and `n` is no more.
                    unsafe { uaccess::write_array(a.kfd_process_device_apertures_ptr, &all[..n]) }?;
                    a.num_of_nodes = n as u32;
                    Ok(())
                })?
            }
            r if r == AMDKFD_IOC_SET_XNACK_MODE.request => with_arg(arg, |a: &mut kfd_ioctl_set_xnack_mode_args| {
                if a.xnack_enabled < 0 {
                    a.xnack_enabled = 0;
                }
                Ok(())
            })?,
            r if r == AMDKFD_IOC_SET_MEMORY_POLICY.request => {
                with_arg(arg, |a: &mut kfd_ioctl_set_memory_policy_args| {
                    d.gpu_index(a.gpu_id).map(|_| ())
                })?
            }
            r if r == AMDKFD_IOC_SET_TRAP_HANDLER.request => {
                with_arg(arg, |a: &mut kfd_ioctl_set_trap_handler_args| {
                    d.gpu_index(a.gpu_id).map(|_| ())
                })?
            }
            r if r == AMDKFD_IOC_SET_SCRATCH_BACKING_VA.request => {
                with_arg(arg, |a: &mut kfd_ioctl_set_scratch_backing_va_args| {
                    d.gpu_index(a.gpu_id).map(|_| ())
                })?
            }
            r if r == AMDKFD_IOC_GET_QUEUE_WAVE_STATE.request => {
                with_arg(arg, |a: &mut kfd_ioctl_get_queue_wave_state_args| {
                    let q = d.queues.get(&a.queue_id).ok_or(Errno::EINVAL)?;
                    if q.queue_type != KFD_IOC_QUEUE_TYPE_COMPUTE {
                        return Err(Errno::EINVAL);
                    }
                    a.ctl_stack_used_size = 0;
                    a.save_area_used_size = 0;
                    Ok(())
                })?
            }
            _ => return Err(Errno::ENOTTY),
        }
        Ok(0)
    }
}
