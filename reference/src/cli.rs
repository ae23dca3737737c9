//! The command line both examples take: one path, and `--device cpu|wgpu|cuda`.

use std::path::PathBuf;
use std::process::ExitCode;

use nn::Device;

/// `PATH [--device cpu|wgpu|cuda]` from the process's arguments, or the exit code after the usage line (`name`
/// and `what` the path is, for it) was printed.
pub fn path_and_device(name: &str, what: &str) -> Result<(PathBuf, Device), ExitCode> {
    let args = parse(name, what, false)?;
    Ok((args.path, args.device))
}

/// The efficientzero example's command line: `DIR [--device cpu|wgpu|cuda] [--weights FILE]`.
pub struct ExportArgs {
    /// The export's folder.
    pub path: PathBuf,
    /// Where the network runs.
    pub device: Device,
    /// A weights file other than the folder's (`.safetensors`, `.pt` or `.pth`).
    pub weights: Option<PathBuf>,
}

/// [`ExportArgs`] from the process's arguments, or the exit code after the usage line was printed.
pub fn export_args(name: &str) -> Result<ExportArgs, ExitCode> {
    parse(name, "DIR", true)
}

fn parse(name: &str, what: &str, takes_weights: bool) -> Result<ExportArgs, ExitCode> {
    let weights_usage = if takes_weights { " [--weights FILE]" } else { "" };
    let usage = |problem: &str| {
        if !problem.is_empty() {
            eprintln!("error: {problem}");
        }
        eprintln!("usage: {name} {what} [--device cpu|wgpu|cuda]{weights_usage}");
        ExitCode::from(2)
    };
    let mut args = std::env::args().skip(1);
    let mut path: Option<PathBuf> = None;
    let mut weights: Option<PathBuf> = None;
    let mut device = Device::Cpu;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--device" => match args.next().as_deref().and_then(Device::parse) {
                Some(d) => device = d,
                None => return Err(usage("--device takes cpu, wgpu or cuda")),
            },
            "--weights" if takes_weights => match args.next() {
                Some(file) => weights = Some(PathBuf::from(file)),
                None => return Err(usage("--weights takes a file")),
            },
            "-h" | "--help" => return Err(usage("")),
            other if path.is_none() && !other.starts_with("--") => path = Some(PathBuf::from(other)),
            other => return Err(usage(&format!("unexpected argument {other:?}"))),
        }
    }
    match path {
        Some(path) => Ok(ExportArgs { path, device, weights }),
        None => Err(usage(&format!("{what} is missing"))),
    }
}
