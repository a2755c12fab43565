//! A small file system of the test's own, for running out of space on purpose: a size-limited tmpfs the test mounts
//! (the tests run as root) and unmounts when it is dropped. Where mounting is impossible the test is skipped with a
//! note, except under `CI=true`, where it fails.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct SmallDisk {
    path: PathBuf,
}

impl SmallDisk {
    /// A fresh tmpfs of `bytes` bytes, or `None` (with a note) when it cannot be mounted outside CI.
    pub fn mount_or_skip(bytes: u64) -> Option<SmallDisk> {
        let path = std::env::temp_dir().join(format!("frontdesk-disk-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&path).expect("a mount point");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes},mode=0700"), "frontdesk-test"])
            .arg(&path)
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { path }),
            failed => {
                let _ = std::fs::remove_dir(&path);
                let why = match failed {
                    Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                    Err(err) => err.to_string(),
                };
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "a small tmpfs is required under CI=true (the tests mount one as root): {why}"
                );
                eprintln!(
                    "skipping: cannot mount a small tmpfs ({why}); run as root, or set CI=true to make this a failure"
                );
                None
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes every byte left, with a file of zeros written until the file system refuses more.
    pub fn fill(&self) {
        let mut file = std::fs::File::create(self.filler()).expect("the filler file");
        for size in [1 << 16, 1 << 12, 1] {
            let chunk = vec![0_u8; size];
            while file.write_all(&chunk).is_ok() {}
        }
        let _ = file.sync_all();
    }

    /// Gives back what [`SmallDisk::fill`] took.
    pub fn free(&self) {
        std::fs::remove_file(self.filler()).expect("the filler file removed");
    }

    /// Bytes free, as `statvfs` counts them (from `df`).
    pub fn available(&self) -> u64 {
        let out = Command::new("df").args(["--output=avail", "-B1"]).arg(&self.path).output().expect("df");
        String::from_utf8_lossy(&out.stdout).lines().nth(1).and_then(|l| l.trim().parse().ok()).expect("df's answer")
    }

    fn filler(&self) -> PathBuf {
        self.path.join("filler")
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: a connection the test still holds keeps files open until it goes.
        let _ = Command::new("umount").arg("-l").arg(&self.path).output();
        let _ = std::fs::remove_dir(&self.path);
    }
}
