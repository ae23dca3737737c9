//! Trains a small CNN (written with the derive: `reference::digits::DigitsNet`) on scikit-learn's 8×8 digits
//! shipped in `data/digits.safetensors` (1,437 training and 360 test images), with Adam and a cosine schedule,
//! showing a progress bar with the loss and accuracy; prints the test accuracy, saves the model, the optimizer
//! and the scheduler to `--out` (resumable with `--resume`), and plots loss and accuracy per epoch as a PNG.
//!
//! ```sh
//! cargo run --release --example train                   # CPU, 12 epochs
//! cargo run --release --example train -- --device wgpu
//! cargo run --release --example train -- --epochs 20 --resume
//! ```
//!
//! Options: `--device cpu|wgpu`, `--epochs N` (total, counting resumed ones; 12), `--batch N` (32), `--lr X`
//! (0.01), `--out DIR` (`target/digits`), `--resume` (continue the run saved in `--out`), `--stop-after N`
//! (stop after epoch N of the schedule, as an interrupted run), `--min-accuracy X` (exit 1 when the test
//! accuracy ends below X: what CI runs). Each epoch shuffles from its own seed, so a run stopped and resumed
//! ends with the same weights, bit for bit, as one that was not.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use nn::optim::lr_scheduler::{CosineAnnealingLR, LrScheduler, SchedulerState};
use nn::optim::{Adam, AdamOptions, Hyper, Optimizer, OptimizerState};
use nn::prelude::*;
use reference::digits::{DigitsNet, evaluate, load, train_epoch};

struct Options {
    device: Device,
    epochs: usize,
    batch: usize,
    lr: f64,
    out: PathBuf,
    resume: bool,
    stop_after: Option<usize>,
    min_accuracy: Option<f64>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        device: Device::Cpu,
        epochs: 12,
        batch: 32,
        lr: 0.01,
        out: PathBuf::from("target/digits"),
        resume: false,
        stop_after: None,
        min_accuracy: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--device" => {
                let v = value("--device")?;
                o.device = Device::parse(&v).ok_or(format!("unknown device {v:?}"))?;
            }
            "--epochs" => o.epochs = value("--epochs")?.parse().map_err(|e| format!("--epochs: {e}"))?,
            "--batch" => o.batch = value("--batch")?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--lr" => o.lr = value("--lr")?.parse().map_err(|e| format!("--lr: {e}"))?,
            "--out" => o.out = PathBuf::from(value("--out")?),
            "--resume" => o.resume = true,
            "--stop-after" => {
                o.stop_after = Some(
                    value("--stop-after")?
                        .parse()
                        .map_err(|e| format!("--stop-after: {e}"))?,
                )
            }
            "--min-accuracy" => {
                o.min_accuracy = Some(
                    value("--min-accuracy")?
                        .parse()
                        .map_err(|e| format!("--min-accuracy: {e}"))?,
                )
            }
            other => return Err(format!("unknown argument {other:?} (see the example's doc comment)")),
        }
    }
    if o.batch == 0 || o.epochs == 0 {
        return Err("--batch and --epochs must be positive".into());
    }
    Ok(o)
}

/// Per finished epoch: train loss, train accuracy, test loss, test accuracy.
type History = Vec<[f64; 4]>;

/// The scheduler's state and the history as tensors (beside the optimizer's).
fn save_progress(dir: &Path, sched: &dyn LrScheduler, history: &History) -> nn::Result<()> {
    let mut sd = StateDict::new();
    for (k, v) in sched.state_dict() {
        let t = match v {
            Hyper::Float(x) => Tensor::from_vec(vec![x], Vec::<usize>::new())?,
            Hyper::Int(x) => Tensor::from_vec(vec![x], Vec::<usize>::new())?,
            Hyper::List(x) => Tensor::from_vec(x.clone(), [x.len()])?,
            Hyper::Bool(x) => Tensor::from_vec(vec![x], Vec::<usize>::new())?,
            Hyper::Pair(a, b) => Tensor::from_vec(vec![a, b], [2])?,
        };
        sd.insert(format!("scheduler.{k}"), t);
    }
    let flat: Vec<f64> = history.iter().flatten().copied().collect();
    sd.insert("history".into(), Tensor::from_vec(flat, [history.len(), 4])?);
    nn::io::save_safetensors(&sd, &dir.join("progress.safetensors"))
}

fn load_progress(dir: &Path) -> nn::Result<(SchedulerState, History)> {
    let sd = nn::io::load_safetensors(&dir.join("progress.safetensors"))?;
    let mut state = SchedulerState::new();
    for (k, t) in sd.iter() {
        let Some(name) = k.strip_prefix("scheduler.") else {
            continue;
        };
        let v = t.to_vec_f64()?;
        let value = match (t.dtype(), t.rank()) {
            (DType::I64, 0) => Hyper::Int(v[0] as i64),
            (DType::Bool, 0) => Hyper::Bool(v[0] != 0.0),
            (_, 0) => Hyper::Float(v[0]),
            _ => Hyper::List(v),
        };
        state.insert(name.to_owned(), value);
    }
    let history = sd["history"]
        .to_vec_f64()?
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    Ok((state, history))
}

/// Loss and accuracy per epoch, train and test, as a PNG (axis labels where the DejaVu font is installed).
fn plot(path: &Path, history: &History) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let font = std::fs::read("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").ok();
    let labelled = match font {
        Some(bytes) => {
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
        }
        None => false,
    };
    let root = BitMapBackend::new(path, (900, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(450);
    let epochs = history.len() as f64;
    let panels = [
        (
            left,
            "loss",
            0usize,
            history.iter().map(|h| h[0].max(h[2])).fold(0.0, f64::max) * 1.05,
        ),
        (right, "accuracy", 1usize, 1.0),
    ];
    for (area, name, offset, top) in panels {
        let mut builder = ChartBuilder::on(&area);
        builder.margin(10);
        if labelled {
            builder
                .caption(name, ("sans-serif", 20))
                .x_label_area_size(30)
                .y_label_area_size(45);
        }
        let mut chart = builder.build_cartesian_2d(1.0..epochs.max(2.0), 0.0..top.max(1e-3))?;
        let mut mesh = chart.configure_mesh();
        if !labelled {
            mesh.disable_x_mesh().disable_y_mesh().x_labels(0).y_labels(0);
        }
        mesh.draw()?;
        for (series, color) in [(offset, &BLUE), (offset + 2, &RED)] {
            chart.draw_series(LineSeries::new(
                history.iter().enumerate().map(|(i, h)| ((i + 1) as f64, h[series])),
                color,
            ))?;
        }
    }
    root.present()?;
    if !labelled {
        println!("(the plot has no labels: apt-get install fonts-dejavu-core for them; blue train, red test)");
    }
    Ok(())
}

fn run(o: &Options) -> Result<f64, Box<dyn std::error::Error>> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/digits.safetensors");
    let (train, test) = load(&data)?;
    std::fs::create_dir_all(&o.out)?;
    nn::manual_seed(0);
    let mut net = DigitsNet::new()?;
    net.to_device(o.device)?;
    let mut opt = Adam::new(
        net.parameters(),
        AdamOptions {
            lr: o.lr,
            ..Default::default()
        },
    )?;
    let mut sched = CosineAnnealingLR::new(&mut opt, o.epochs as i64, 0.0)?;
    let mut history: History = vec![];
    if o.resume {
        net.load_safetensors(o.out.join("model.safetensors"), true)?;
        net.to_device(o.device)?;
        opt.load_state_dict(&OptimizerState::load_safetensors(o.out.join("optimizer.safetensors"))?)?;
        let (state, h) = load_progress(&o.out)?;
        sched.load_state_dict(&state)?;
        history = h;
        println!("resumed after epoch {} from {}", history.len(), o.out.display());
    }
    println!("{net}");
    let start = Instant::now();
    let batches = train.len().div_ceil(o.batch);
    let last = o.stop_after.map_or(o.epochs, |s| s.min(o.epochs));
    for epoch in history.len()..last {
        let bar = ProgressBar::new(batches as u64);
        bar.set_style(
            ProgressStyle::with_template("epoch {prefix:>2} [{bar:30}] {pos}/{len} {msg}")?.progress_chars("=> "),
        );
        bar.set_prefix(format!("{}", epoch + 1));
        // Each epoch's shuffle from its own seed, so a resumed run draws what the uninterrupted one does.
        nn::manual_seed(1 + epoch as u64);
        let (mut loss_sum, mut correct, mut seen) = (0.0, 0, 0);
        train_epoch(&mut net, &mut opt, &train, o.batch, o.device, |b| {
            loss_sum += b.loss * b.size as f64;
            correct += b.correct;
            seen += b.size;
            bar.set_message(format!(
                "loss {:.4}  accuracy {:.1} %",
                loss_sum / seen as f64,
                100.0 * correct as f64 / seen as f64
            ));
            bar.inc(1);
        })?;
        sched.step(&mut opt)?;
        let (test_loss, test_accuracy) = evaluate(&mut net, &test, o.device)?;
        bar.finish_with_message(format!(
            "loss {:.4}  accuracy {:.1} %  | test loss {test_loss:.4}  accuracy {:.1} %",
            loss_sum / seen as f64,
            100.0 * correct as f64 / seen as f64,
            100.0 * test_accuracy
        ));
        history.push([
            loss_sum / seen as f64,
            correct as f64 / seen as f64,
            test_loss,
            test_accuracy,
        ]);
        net.save_safetensors(o.out.join("model.safetensors"))?;
        opt.state_dict()?
            .save_safetensors(o.out.join("optimizer.safetensors"))?;
        save_progress(&o.out, &sched, &history)?;
    }
    let (_, accuracy) = evaluate(&mut net, &test, o.device)?;
    println!(
        "test accuracy {:.2} % ({} images) after {} epochs, {:.1} s on {}",
        100.0 * accuracy,
        test.len(),
        history.len(),
        start.elapsed().as_secs_f64(),
        o.device
    );
    let png = o.out.join("training.png");
    plot(&png, &history)?;
    println!(
        "saved {}, {}, {}",
        o.out.join("model.safetensors").display(),
        o.out.join("optimizer.safetensors").display(),
        png.display()
    );
    Ok(accuracy)
}

fn main() {
    let options = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("train: {e}");
            std::process::exit(2);
        }
    };
    match run(&options) {
        Ok(accuracy) => {
            if let Some(min) = options.min_accuracy
                && accuracy < min
            {
                eprintln!("train: test accuracy {accuracy:.4} is below --min-accuracy {min}");
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("train: {e}");
            std::process::exit(1);
        }
    }
}
