"""Packs the staged poseact tree into a pip wheel, as tools written in other languages ship
on PyPI: no Python code, the binary in the wheel's scripts (pip puts it on the venv's PATH,
unchanged) and the models, configs, man pages and licences in its data (installed under
the venv's share/, where the binary looks beside itself: ../share/poseact/models).

    python3 make_wheel.py STAGE_USR VERSION ARCH GLIBC OUT_DIR

STAGE_USR is the staged usr/ tree (bin/poseact, share/...); ARCH x86_64 or aarch64; GLIBC
the oldest glibc the binary needs, as 2.35. Only the standard library: the wheel is a zip
with a RECORD of sha256 digests (PEP 427, PEP 491), written in a fixed order with fixed
times, so the same tree gives the same bytes.
"""
import base64
import hashlib
import os
import sys
import zipfile

FIXED_TIME = (2020, 1, 1, 0, 0, 0)


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main() -> int:
    if len(sys.argv) != 6:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    stage, version, arch, glibc, out_dir = sys.argv[1:]
    if arch not in ("x86_64", "aarch64"):
        print(f"make_wheel: ERROR: architecture {arch!r} is not x86_64 or aarch64", file=sys.stderr)
        return 2
    major, minor = glibc.split(".")
    tag = f"py3-none-manylinux_{int(major)}_{int(minor)}_{arch}"
    name = f"poseact-{version}"
    dist_info, data = f"{name}.dist-info", f"{name}.data"

    # (path in the wheel, bytes, executable)
    entries = []
    binary = os.path.join(stage, "bin", "poseact")
    with open(binary, "rb") as f:
        entries.append((f"{data}/scripts/poseact", f.read(), True))
    share = os.path.join(stage, "share")
    for folder, dirs, files in os.walk(share):
        dirs.sort()
        for file in sorted(files):
            path = os.path.join(folder, file)
            rel = os.path.relpath(path, stage)
            with open(path, "rb") as f:
                entries.append((f"{data}/data/{rel}", f.read(), False))
    licences = os.path.join(share, "doc", "poseact")
    for file in ("LICENSE", "THIRD-PARTY.md"):
        with open(os.path.join(licences, file), "rb") as f:
            entries.append((f"{dist_info}/licenses/{file}", f.read(), False))

    readme = open(os.path.join(licences, "README.md"), encoding="utf-8").read()
    metadata = "\n".join([
        "Metadata-Version: 2.4",
        "Name: poseact",
        f"Version: {version}",
        "Summary: Train human-action classifiers from labeled videos and run them live on a camera",
        "License-Expression: Apache-2.0 AND LGPL-2.1-or-later AND BSD-2-Clause AND BSD-3-Clause AND Zlib AND MIT"
        " AND ISC AND OpenSSL AND Unicode-3.0 AND GPL-3.0-or-later WITH GCC-exception-3.1",
        "License-File: LICENSE",
        "License-File: THIRD-PARTY.md",
        "Requires-Python: >=3.8",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Environment :: Console",
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ])
    wheel = "\n".join([
        "Wheel-Version: 1.0",
        "Generator: poseact make_wheel.py",
        "Root-Is-Purelib: false",
        f"Tag: {tag}",
        "",
    ])
    entries.append((f"{dist_info}/METADATA", metadata.encode(), False))
    entries.append((f"{dist_info}/WHEEL", wheel.encode(), False))
    record_name = f"{dist_info}/RECORD"
    record = "".join(f"{path},{digest(body)},{len(body)}\n" for path, body, _ in entries) + f"{record_name},,\n"
    entries.append((record_name, record.encode(), False))

    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, f"{name}-{tag}.whl")
    temporary = out + ".partial"
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for path, body, executable in entries:
            info = zipfile.ZipInfo(path, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o100755 if executable else 0o100644) << 16)
            z.writestr(info, body)
    os.replace(temporary, out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
