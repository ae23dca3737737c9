//! The command line both examples take: one path, and `--device cpu|wgpu|cuda`.

use std::path::PathBuf;
use std::process::ExitCode;

use nn::Device;

/// `PATH [--device cpu|wgpu|cuda]` from the process's arguments, or the exit code after the usage line (`name`
/// and `what` the path is, for it) was printed.
pub fn path_and_device(name: &str, what: &str) -> Result<(PathBuf, Device), ExitCode> {
    let usage = |problem: &str| {
        if !problem.is_empty() {
            eprintln!("error: {problem}");
        }
        eprintln!("usage: {name} {what} [--device cpu|wgpu|cuda]");
        ExitCode::from(2)
    };
    let mut args = std::env::args().skip(1);
    let mut path: Option<PathBuf> = None;
    let mut device = Device::Cpu;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--device" => match args.next().as_deref().and_then(Device::parse) {
                Some(d) => device = d,
                None => return Err(usage("--device takes cpu, wgpu or cuda")),
            },
            "-h" | "--help" => return Err(usage("")),
            other if path.is_none() && !other.starts_with("--") => path = Some(PathBuf::from(other)),
            other => return Err(usage(&format!("unexpected argument {other:?}"))),
        }
    }
    match path {
        Some(path) => Ok((path, device)),
        None => Err(usage(&format!("{what} is missing"))),
    }
}
