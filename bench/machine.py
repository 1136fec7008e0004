"""The machine line both benchmark reports open with: CPU model, cores, OS, Python and
the versions of the packages measured."""
import os
import platform


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine_line(packages):
    """packages: importable module names whose versions the line lists ("?" when absent)."""
    versions = []
    for mod in packages:
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except Exception:  # noqa: BLE001 - the version is informative only
            versions.append(f"{mod} ?")
    return (f"{cpu_model()}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, " + ", ".join(versions) +
            f", load average {os.getloadavg()[0]:.1f} at start")
