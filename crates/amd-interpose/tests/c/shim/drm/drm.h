/* Where libdrm's headers are not installed: what <linux/kfd_ioctl.h> takes from
 * <drm/drm.h> is the kernel's fixed-width types. Searched after the system's own
 * directories (-idirafter), so a real <drm/drm.h> wins. */
#ifndef AMD_INTERPOSE_DRM_SHIM_H
#define AMD_INTERPOSE_DRM_SHIM_H
#include <linux/types.h>
#endif
