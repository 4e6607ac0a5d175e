/* What libdrm asks of a render node before it talks to it, as a C client built with
 * 64-bit file offsets (fcntl is then glibc's fcntl64): the node is a character device
 * of DRM's major to stat and fstat, sysfs knows it by number, a descriptor duplicated
 * with F_DUPFD_CLOEXEC reaches the same device, and DRM_IOCTL_VERSION names amdgpu.
 * Prints "ok" or the step that failed. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct drm_version {
    int version_major, version_minor, version_patchlevel;
    unsigned long name_len;
    char *name;
    unsigned long date_len;
    char *date;
    unsigned long desc_len;
    char *desc;
};
#define DRM_IOCTL_VERSION _IOWR('d', 0x00, struct drm_version)

#define FAIL(what) do { printf("failed: %s\n", what); return 1; } while (0)

int main(void) {
    struct stat st;
    if (stat("/dev/dri/renderD128", &st) != 0) FAIL("stat");
    if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 226 || minor(st.st_rdev) != 128) FAIL("stat: not char 226:128");
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    if (fd < 0) FAIL("open");
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(226, 128)) FAIL("fstat");
    if (stat("/sys/dev/char/226:128/device/drm", &st) != 0 || !S_ISDIR(st.st_mode)) FAIL("sysfs by number");
    char link[256] = {0};
    if (readlink("/sys/dev/char/226:128/device/subsystem", link, sizeof link - 1) < 0) FAIL("subsystem link");
    const char *bus = strrchr(link, '/');
    if (!bus || strcmp(bus + 1, "pci") != 0) FAIL("subsystem is not pci");
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) FAIL("fcntl F_DUPFD_CLOEXEC");
    char name[32] = {0};
    struct drm_version v = {0};
    v.name = name;
    v.name_len = sizeof name - 1;
    if (ioctl(dup, DRM_IOCTL_VERSION, &v) != 0) FAIL("DRM_IOCTL_VERSION on the duplicate");
    if (strcmp(name, "amdgpu") != 0 || v.version_major != 3) FAIL("driver name or version");
    close(dup);
    close(fd);
    printf("ok\n");
    return 0;
}
