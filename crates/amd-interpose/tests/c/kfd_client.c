/*
 * A KFD client written against <linux/kfd_ioctl.h> alone, as a program that knows
 * nothing of amd-hcq would be: it reads the topology, opens /dev/kfd and the render
 * node, acquires the VM, allocates and maps memory, creates a compute queue, forks a
 * child that closes the devices and runs /bin/true, loads a
 * code object (ELF program headers, the kernel descriptor), dispatches it with PM4
 * packets rung through the doorbell with a plain store, waits for the end-of-pipe
 * event, checks the result, then runs the kernel on an unmapped address and waits
 * for the memory-fault event.
 *
 * Usage: kfd_client <vadd.hsaco>. Prints one line per step; exits 0 when every step
 * passed, 1 (naming the step) otherwise. Under amd-interpose's LD_PRELOAD it talks to
 * the mock GPU; on a machine with a gfx11 GPU it talks to the real one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kfd_ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define TOPO "/sys/devices/virtual/kfd/kfd/topology/nodes"

static void die(const char *step) {
    fprintf(stderr, "FAILED: %s (errno %d: %s)\n", step, errno, strerror(errno));
    exit(1);
}

static void check(int ok, const char *step) {
    if (!ok) {
        errno = 0;
        die(step);
    }
}

/* Reads a small file (sysfs text) with open/read, as a plain client does. */
static int read_text(const char *path, char *buf, size_t len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = 0;
    return 0;
}

static uint64_t prop(const char *props, const char *key) {
    size_t k = strlen(key);
    for (const char *l = props; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, key, k) == 0 && l[k] == ' ') return strtoull(l + k + 1, NULL, 10);
    }
    return 0;
}

static int kfd, drm;
static uint32_t gpu_id;

/* GPU memory: reserve address space, allocate at it, map for the CPU, map for the GPU. */
struct mem {
    uint64_t va, size, handle;
};

static struct mem alloc_mem(uint64_t size, uint32_t flags) {
    struct mem m = {0};
    void *va = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED) die("reserve address space");
    struct kfd_ioctl_alloc_memory_of_gpu_args a = {
        .va_addr = (uint64_t)va, .size = size, .gpu_id = gpu_id,
        .flags = flags | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE |
                 KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
    };
    if (ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a) < 0) die("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU");
    if (mmap(va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, drm, a.mmap_offset) == MAP_FAILED)
        die("mmap of the render node");
    uint32_t ids[1] = {gpu_id};
    struct kfd_ioctl_map_memory_to_gpu_args mp = {
        .handle = a.handle, .device_ids_array_ptr = (uint64_t)ids, .n_devices = 1,
    };
    if (ioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mp) < 0 || mp.n_success != 1) die("AMDKFD_IOC_MAP_MEMORY_TO_GPU");
    m.va = a.va_addr;
    m.size = size;
    m.handle = a.handle;
    return m;
}

static uint32_t create_event(uint32_t type, uint64_t page_handle) {
    struct kfd_ioctl_create_event_args e = {.event_type = type, .auto_reset = 1, .event_page_offset = page_handle};
    if (ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &e) < 0) die("AMDKFD_IOC_CREATE_EVENT");
    return e.event_id;
}

/* Waits for one event; returns its data (memory exception data for fault events). */
static int wait_event(uint32_t id, uint32_t timeout_ms, struct kfd_hsa_memory_exception_data *mem) {
    struct kfd_event_data d = {.event_id = id};
    struct kfd_ioctl_wait_events_args w = {
        .events_ptr = (uint64_t)&d, .num_events = 1, .wait_for_all = 1, .timeout = timeout_ms,
    };
    if (ioctl(kfd, AMDKFD_IOC_WAIT_EVENTS, &w) < 0) die("AMDKFD_IOC_WAIT_EVENTS");
    if (mem) *mem = d.memory_exception_data;
    return w.wait_result == KFD_IOC_WAIT_RESULT_COMPLETE;
}

/* PM4 (gfx11). */
#define PKT3(op, n) (0xc0000000u | (((uint32_t)(n) - 1) << 16) | ((uint32_t)(op) << 8))
#define SET_SH_REG 0x76
#define DISPATCH_DIRECT 0x15
#define RELEASE_MEM 0x49
/* SH register offsets (gc 11.0.0, dword offsets from the SH base). */
#define COMPUTE_START_X 0x204
#define COMPUTE_PGM_LO 0x20c
#define COMPUTE_PGM_RSRC1 0x212
#define COMPUTE_RESOURCE_LIMITS 0x215
#define COMPUTE_TMPRING_SIZE 0x218
#define COMPUTE_PGM_RSRC3 0x228
#define COMPUTE_USER_DATA_0 0x240

struct ring {
    uint32_t *buf;
    uint64_t dwords, wptr;
};

static void put(struct ring *r, uint32_t w) { r->buf[r->wptr++ % r->dwords] = w; }

static void set_sh(struct ring *r, uint32_t reg, const uint32_t *v, int n) {
    put(r, PKT3(SET_SH_REG, n + 1));
    put(r, reg);
    for (int i = 0; i < n; i++) put(r, v[i]);
}

/* RELEASE_MEM at the end of pipe: caches written back (`dw1` names the event and
 * cache actions), then `value` written to `addr`, and the interrupt sent with context
 * `ctx` (INT_SEL 2: after the write is confirmed; DATA_SEL 1: the low 32 bits). */
#define EOP_FLUSH 0x0070f514u  /* CACHE_FLUSH_AND_INV_TS_EVENT, EVENT_INDEX 5, GCR bits */
#define EOP_PLAIN 0x00000514u  /* the same event, no cache actions */
static void release(struct ring *r, uint32_t dw1, uint64_t addr, uint64_t value, uint32_t ctx) {
    put(r, PKT3(RELEASE_MEM, 7));
    put(r, dw1);
    put(r, 0x22000000u);
    put(r, (uint32_t)addr);
    put(r, (uint32_t)(addr >> 32));
    put(r, (uint32_t)value);
    put(r, (uint32_t)(value >> 32));
    put(r, ctx);
}

struct kernel {
    uint64_t code, kd_props;
    uint32_t rsrc1, rsrc2, rsrc3;
};

/* Loads the PT_LOAD segments of `path` into GPU memory; finds `<name>.kd`. */
static struct kernel load(const char *path, const char *name, struct mem *code_mem) {
    struct kernel k = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("open the code object");
    off_t size = lseek(fd, 0, SEEK_END);
    uint8_t *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED) die("map the code object");
    Elf64_Ehdr *eh = (Elf64_Ehdr *)f;
    check(size >= (off_t)sizeof *eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_machine == EM_AMDGPU,
          "an AMDGPU ELF code object");
    uint64_t image = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr *ph = (Elf64_Phdr *)(f + eh->e_phoff + (uint64_t)i * eh->e_phentsize);
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > image) image = ph->p_vaddr + ph->p_memsz;
    }
    check(image > 0 && image < (64u << 20), "loadable segments");
    *code_mem = alloc_mem((image + 0xfff) & ~0xfffull, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
    uint8_t *dst = (uint8_t *)code_mem->va;
    memset(dst, 0, code_mem->size);
    for (int i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr *ph = (Elf64_Phdr *)(f + eh->e_phoff + (uint64_t)i * eh->e_phentsize);
        if (ph->p_type == PT_LOAD) memcpy(dst + ph->p_vaddr, f + ph->p_offset, ph->p_filesz);
    }
    char kd_name[128];
    snprintf(kd_name, sizeof kd_name, "%s.kd", name);
    uint64_t kd = 0;
    for (int i = 0; i < eh->e_shnum && !kd; i++) {
        Elf64_Shdr *sh = (Elf64_Shdr *)(f + eh->e_shoff + (uint64_t)i * eh->e_shentsize);
        if (sh->sh_type != SHT_DYNSYM && sh->sh_type != SHT_SYMTAB) continue;
        Elf64_Shdr *strs = (Elf64_Shdr *)(f + eh->e_shoff + (uint64_t)sh->sh_link * eh->e_shentsize);
        for (uint64_t s = 0; s < sh->sh_size / sizeof(Elf64_Sym); s++) {
            Elf64_Sym *sym = (Elf64_Sym *)(f + sh->sh_offset) + s;
            if (strcmp((char *)f + strs->sh_offset + sym->st_name, kd_name) == 0) kd = sym->st_value;
        }
    }
    check(kd != 0 && kd + 64 <= image, "the kernel descriptor");
    const uint8_t *d = dst + kd;
    int64_t entry;
    memcpy(&entry, d + 16, 8);
    memcpy(&k.rsrc3, d + 44, 4);
    memcpy(&k.rsrc1, d + 48, 4);
    memcpy(&k.rsrc2, d + 52, 4);
    uint16_t props;
    memcpy(&props, d + 56, 2);
    k.kd_props = props;
    k.code = code_mem->va + kd + entry;
    munmap(f, size);
    return k;
}

/* Rings the doorbell: the write pointer where the CP reads it, then the doorbell (a
 * plain 64-bit store, as on hardware). */
static void submit(struct ring *r, volatile uint64_t *wptr, volatile uint64_t *doorbell) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *wptr = r->wptr;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *doorbell = r->wptr;
}

static void dispatch(struct ring *r, struct kernel *k, uint64_t kernargs, uint32_t groups, uint32_t local) {
    uint32_t pgm[2] = {(uint32_t)(k->code >> 8), (uint32_t)(k->code >> 40)};
    uint32_t rsrc[2] = {k->rsrc1, k->rsrc2};
    uint32_t zero = 0;
    uint32_t user[2] = {(uint32_t)kernargs, (uint32_t)(kernargs >> 32)};
    uint32_t start[8] = {0, 0, 0, local, 1, 1, 0, 0};
    set_sh(r, COMPUTE_PGM_LO, pgm, 2);
    set_sh(r, COMPUTE_PGM_RSRC1, rsrc, 2);
    set_sh(r, COMPUTE_PGM_RSRC3, &k->rsrc3, 1);
    set_sh(r, COMPUTE_TMPRING_SIZE, &zero, 1);
    set_sh(r, COMPUTE_USER_DATA_0, user, 2);
    set_sh(r, COMPUTE_START_X, start, 8);
    set_sh(r, COMPUTE_RESOURCE_LIMITS, &zero, 1);
    put(r, PKT3(DISPATCH_DIRECT, 4));
    put(r, groups);
    put(r, 1);
    put(r, 1);
    put(r, 0x8005); /* COMPUTE_SHADER_EN | FORCE_START_AT_000 | CS_W32_EN */
}

/* A thread asking /dev/kfd for its version while the main thread starts children:
 * the children's calls must not disturb it, nor it them. */
static volatile int asking = 1;
static void *ask_versions(void *arg) {
    long *answers = arg;
    while (asking) {
        struct kfd_ioctl_get_version_args v = {0};
        if (ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v) < 0 || v.major_version != 1) return NULL;
        __atomic_fetch_add(answers, 1, __ATOMIC_RELEASE);
    }
    return answers;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <vadd.hsaco>\n", argv[0]);
        return 2;
    }
    /* Topology: the first GPU node. */
    DIR *dir = opendir(TOPO);
    if (!dir) die("opendir " TOPO);
    char path[512], props[8192], text[64];
    uint64_t simd = 0, simd_per_cu = 0, gfxv = 0, minor = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, TOPO "/%s/gpu_id", e->d_name);
        if (read_text(path, text, sizeof text) < 0) die("read gpu_id");
        uint32_t id = (uint32_t)strtoul(text, NULL, 10);
        if (id == 0) continue;
        snprintf(path, sizeof path, TOPO "/%s/properties", e->d_name);
        if (read_text(path, props, sizeof props) < 0) die("read properties");
        if (!gpu_id || id < gpu_id) {
            gpu_id = id;
            simd = prop(props, "simd_count");
            simd_per_cu = prop(props, "simd_per_cu");
            gfxv = prop(props, "gfx_target_version");
            minor = prop(props, "drm_render_minor");
        }
    }
    closedir(dir);
    check(gpu_id != 0 && simd_per_cu != 0, "a GPU node in the topology");
    printf("topology: gpu_id %u gfx_target_version %llu render minor %llu\n", gpu_id,
           (unsigned long long)gfxv, (unsigned long long)minor);
    check(gfxv >= 110000 && gfxv < 120000, "a gfx11 GPU (the code object is gfx1100)");

    kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    if (kfd < 0) die("open /dev/kfd");
    struct kfd_ioctl_get_version_args v = {0};
    if (ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v) < 0) die("AMDKFD_IOC_GET_VERSION");
    printf("kfd: version %u.%u\n", v.major_version, v.minor_version);
    printf("abi: header %d.%d, create_queue %zu bytes\n", KFD_IOCTL_MAJOR_VERSION, KFD_IOCTL_MINOR_VERSION,
           sizeof(struct kfd_ioctl_create_queue_args));
    /* A duplicate reaches the same device, and closing it leaves the original open. */
    int kfd2 = fcntl(kfd, F_DUPFD_CLOEXEC, 100);
    if (kfd2 < 0) die("F_DUPFD_CLOEXEC of /dev/kfd");
    struct kfd_ioctl_get_version_args v2 = {0};
    if (ioctl(kfd2, AMDKFD_IOC_GET_VERSION, &v2) < 0 || v2.major_version != v.major_version) die("ioctl on a duplicate");
    close(kfd2);
    printf("dup: a duplicate of /dev/kfd answered, then closed\n");
    snprintf(path, sizeof path, "/dev/dri/renderD%llu", (unsigned long long)minor);
    drm = open(path, O_RDWR | O_CLOEXEC);
    if (drm < 0) die("open the render node");
    struct kfd_ioctl_acquire_vm_args vm = {.drm_fd = (uint32_t)drm, .gpu_id = gpu_id};
    if (ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &vm) < 0) die("AMDKFD_IOC_ACQUIRE_VM");
    printf("vm: acquired\n");

    /* Events: a page of signal slots, a signal event, a memory-fault event. */
    struct mem events = alloc_mem(KFD_SIGNAL_EVENT_LIMIT * 8, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
    uint32_t done_event = create_event(KFD_IOC_EVENT_SIGNAL, events.handle);
    uint32_t fault_event = create_event(KFD_IOC_EVENT_MEMORY, 0);

    /* The queue: ring, pointers, EOP buffer, context-save area (sizes as the thunk
     * computes them). */
    uint64_t cu = simd / simd_per_cu, waves = cu * 32;
    uint64_t vgpr = (gfxv == 110000 || gfxv == 110001 || gfxv == 110501) ? 0x60000 : 0x40000;
    uint64_t wg = ((vgpr + 0x4000 + 0x10000 + 0x1000) * cu + 0xfff) & ~0xfffull;
    uint64_t ctl = (waves * 12 + 48 + 0xfff) & ~0xfffull;
    uint64_t debug = (waves * 32 + 63) & ~63ull;
    uint64_t cwsr = ctl + wg;
    struct mem ring = alloc_mem(1 << 16, KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED);
    struct mem ptrs = alloc_mem(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED);
    struct mem eop = alloc_mem(4096, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
    struct mem ctx = alloc_mem((cwsr + debug + 0xfff) & ~0xfffull, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
    struct kfd_ioctl_create_queue_args q = {
        .ring_base_address = ring.va, .write_pointer_address = ptrs.va + 8, .read_pointer_address = ptrs.va,
        .ring_size = (uint32_t)ring.size, .gpu_id = gpu_id, .queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE,
        .queue_percentage = KFD_MAX_QUEUE_PERCENTAGE, .queue_priority = 7,
        .eop_buffer_address = eop.va, .eop_buffer_size = eop.size,
        .ctx_save_restore_address = ctx.va, .ctx_save_restore_size = (uint32_t)cwsr, .ctl_stack_size = (uint32_t)ctl,
    };
    if (ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &q) < 0) die("AMDKFD_IOC_CREATE_QUEUE");
    volatile uint64_t *doorbell =
        mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, kfd, q.doorbell_offset & ~0x1fffull);
    if (doorbell == MAP_FAILED) die("mmap of the doorbell page");
    doorbell += (q.doorbell_offset & 0x1fff) / 8;
    printf("queue: %u\n", q.queue_id);

    /* A child that closes the device and runs another program (as a compiler launched
     * by the client would) leaves the parent's devices alone. */
    pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(kfd);
        close(drm);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0) die("waitpid");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child");
    printf("fork: the child closed its copies and ran /bin/true\n");

    /* CPython starts subprocesses with vfork: the child runs in the parent's memory
     * until it execs, and closes descriptors (here also with close_range and dup2
     * over them) on its way. None of that may reach the parent's emulated devices. */
    long answers = 0;
    pthread_t asker;
    if (pthread_create(&asker, NULL, ask_versions, &answers) != 0) die("pthread_create");
    /* The thread is asking before the children start (on a busy machine it may not
     * have run yet). */
    while (__atomic_load_n(&answers, __ATOMIC_ACQUIRE) == 0) sched_yield();
    child = vfork();
    if (child < 0) die("vfork");
    if (child == 0) {
        close(kfd);
        dup2(2, drm);
        close_range(3, ~0U, 0);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    if (waitpid(child, &status, 0) < 0) die("waitpid");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the vforked child");
    char *spawn_argv[] = {"true", NULL};
    if (posix_spawn(&child, "/bin/true", NULL, NULL, spawn_argv, environ) != 0) die("posix_spawn");
    if (waitpid(child, &status, 0) < 0) die("waitpid");
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the spawned child");
    asking = 0;
    void *asked = NULL;
    if (pthread_join(asker, &asked) != 0) die("pthread_join");
    check(asked == &answers && answers > 0, "a thread's ioctls while the children ran");
    struct kfd_ioctl_get_version_args v3 = {0};
    if (ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v3) < 0 || v3.major_version != v.major_version)
        die("/dev/kfd after the children");
    /* The parent's own close_range of a duplicate: the number is free again, and a
     * file opened on it is the host's, not the mock's. */
    int extra = dup(kfd);
    if (extra < 0) die("dup");
    if (close_range((unsigned)extra, (unsigned)extra, 0) != 0) die("close_range");
    int reused = open("/dev/null", O_RDONLY);
    if (reused < 0) die("open /dev/null");
    check(ioctl(reused, AMDKFD_IOC_GET_VERSION, &v3) < 0 && errno == ENOTTY, "a closed duplicate's number");
    close(reused);
    if (ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v3) < 0) die("/dev/kfd after close_range of its duplicate");
    printf("vfork: the child closed the devices, close_range'd and dup2'd over them; posix_spawn and close_range left them working; a thread's %ld ioctls meanwhile answered\n", answers);

    /* The kernel and its data. */
    struct mem code;
    struct kernel k = load(argv[1], "vadd", &code);
    check((k.kd_props & 0x7f) == 0x8, "a kernel that asks only for the kernarg pointer");
    const uint32_t n = 1000;
    struct mem data = alloc_mem(3 * 4096, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
    float *a = (float *)data.va, *b = a + 1024, *c = b + 1024;
    for (uint32_t i = 0; i < 1024; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
        c[i] = -1.0f;
    }
    struct mem args = alloc_mem(4096, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
    uint64_t *kargs = (uint64_t *)args.va;
    kargs[0] = (uint64_t)a;
    kargs[1] = (uint64_t)b;
    kargs[2] = (uint64_t)c;
    ((uint32_t *)kargs)[6] = n;
    volatile uint64_t *signal = (volatile uint64_t *)(ptrs.va + 64);
    *signal = 0;

    struct ring r = {(uint32_t *)ring.va, ring.size / 4, 0};
    dispatch(&r, &k, args.va, (n + 255) / 256, 256);
    release(&r, EOP_FLUSH, (uint64_t)signal, 1, 0);
    release(&r, EOP_PLAIN, events.va + 8 * done_event, done_event, done_event);
    submit(&r, (volatile uint64_t *)(ptrs.va + 8), doorbell);
    check(wait_event(done_event, 10000, NULL), "the end-of-pipe event");
    check(*signal == 1, "the signal written by RELEASE_MEM");
    for (uint32_t i = 0; i < n; i++) {
        if (c[i] != a[i] + b[i]) {
            fprintf(stderr, "FAILED: vadd element %u: %f, not %f\n", i, c[i], a[i] + b[i]);
            return 1;
        }
    }
    check(c[n] == -1.0f, "nothing written past n");
    printf("dispatch: vadd of %u floats correct, event %u signalled\n", n, done_event);

    /* A fault: the output pointer at unmapped memory. */
    uint64_t bad = 0x10000;
    kargs[2] = bad;
    dispatch(&r, &k, args.va, 1, 256);
    release(&r, EOP_PLAIN, events.va + 8 * done_event, done_event, done_event);
    submit(&r, (volatile uint64_t *)(ptrs.va + 8), doorbell);
    struct kfd_hsa_memory_exception_data mem;
    check(wait_event(fault_event, 10000, &mem), "the memory-fault event");
    check(mem.gpu_id == gpu_id, "the fault names the GPU");
    check(mem.va >> 12 == bad >> 12, "the fault names the page written");
    printf("fault: at %#llx on gpu %u, not present %u\n", (unsigned long long)mem.va, mem.gpu_id,
           mem.failure.NotPresent);

    struct kfd_ioctl_destroy_queue_args dq = {.queue_id = q.queue_id};
    if (ioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &dq) < 0) die("AMDKFD_IOC_DESTROY_QUEUE");
    printf("all steps passed\n");
    return 0;
}
