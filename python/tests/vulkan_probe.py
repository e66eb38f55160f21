"""Whether this machine has a Vulkan device, asked of the Vulkan loader with ctypes (no Kiln, no pytest)."""


def vulkan_device_exists():
    """Whether this machine has a Vulkan device, asked of the Vulkan loader directly (not through Kiln), so that
    GPU tests skip only where there is none and fail where Kiln did not use one that exists."""
    import ctypes

    try:
        vk = ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return False

    class AppInfo(ctypes.Structure):
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("pApplicationName", ctypes.c_char_p),
                    ("applicationVersion", ctypes.c_uint32), ("pEngineName", ctypes.c_char_p),
                    ("engineVersion", ctypes.c_uint32), ("apiVersion", ctypes.c_uint32)]

    class InstanceInfo(ctypes.Structure):
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32),
                    ("pApplicationInfo", ctypes.POINTER(AppInfo)), ("enabledLayerCount", ctypes.c_uint32),
                    ("ppEnabledLayerNames", ctypes.c_void_p), ("enabledExtensionCount", ctypes.c_uint32),
                    ("ppEnabledExtensionNames", ctypes.c_void_p)]

    app = AppInfo(0, None, b"kiln-probe", 0, None, 0, (1 << 22) | (1 << 12))  # VK_API_VERSION_1_1
    info = InstanceInfo(1, None, 0, ctypes.pointer(app), 0, None, 0, None)
    instance = ctypes.c_void_p()
    if vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance)) != 0:
        return False
    count = ctypes.c_uint32(0)
    ok = vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None) == 0 and count.value > 0
    vk.vkDestroyInstance(instance, None)
    return ok
