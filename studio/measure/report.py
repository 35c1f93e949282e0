"""The benchmark's human side: a Markdown report and PNG plots from ``bench.json``'s dict.

Pure functions of the result dict (:func:`studio.measure.runner.run_bench`), so a
stored ``bench.json`` can be re-rendered (``studio bench --report-only DIR``)
without measuring again. matplotlib is imported only by :func:`write_plots`
(Agg backend, no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

MiB = 1024 * 1024
#: load average per CPU above which the report says the machine was busy
BUSY_LOAD_PER_CPU = 1.0
PLOT_FILES = {
    "speed_vs_batch": "speed_vs_batch.png",
    "latency": "latency.png",
    "throughput": "throughput.png",
}


# ------------------------------------------------------------------ formatting


def _num(v: Any, fmt: str = "{:.2f}", none: str = "-") -> str:
    if v is None:
        return none
    try:
        return fmt.format(v)
    except (TypeError, ValueError):
        return str(v)


def _mib(v: Any) -> str:
    return "-" if not v else f"{v / MiB:.0f}"


def _x(v: Any) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] | None = None) -> str:
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    for r in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(lines)


def load_note(result: dict[str, Any]) -> str:
    """One sentence about how busy the machine was (other jobs skew absolute numbers)."""
    load = result.get("load_average") or {}
    cpus = (result.get("machine") or {}).get("logical_cpus") or 1
    mean = load.get("mean_1min")
    if mean is None:
        start = load.get("start") or [None]
        mean = start[0]
    if mean is None:
        return ""
    text = f"load average during the run: mean {mean:.1f}"
    if load.get("max_1min") is not None:
        text += f", max {load['max_1min']:.1f}"
    text += f" on {cpus} CPU(s)"
    if mean / cpus > BUSY_LOAD_PER_CPU:
        text += (
            " -- **the machine was shared with other jobs**: absolute speeds are lower than on an idle "
            "machine; ratios between rows measured in the same run are the more reliable figures"
        )
    return text


def _vram_peak(row: dict[str, Any]) -> str:
    vram = row.get("vram") or {}
    peak = (vram.get("peak") or {}).get("peak_allocated") or (vram.get("end") or {}).get("peak_allocated")
    return _mib(peak)


# ------------------------------------------------------------------ markdown


def speed_rows(result: dict[str, Any]) -> list[list[str]]:
    """One row per measured preset plus the two piper CLI rows (shared with the CLI's summary)."""
    rows: list[list[str]] = []
    piper = result.get("piper_cli") or {}
    if piper.get("error"):
        rows.append(["piper CLI", f"failed: {piper['error']}"] + ["-"] * 14)
    elif piper:
        rounds = f"; {piper.get('rounds', 1)} round(s)"
        for label, key, note in (("piper CLI (steady)", "steady", "one process, minus start-up" + rounds),
                                 ("piper CLI (with start-up)", "total", f"start-up {piper['startup_s']:.1f} s" + rounds)):
            p = piper[key]
            rows.append([label, note, str(p["sentences"]), _num(p["audio_seconds"], "{:.1f}"),
                         _num(p["x_real_time"]), _num(p["rtf"], "{:.3f}"), _num(p["sentences_per_s"]),
                         "1.00x" if key == "steady" else _x(p["x_real_time"] / piper["steady"]["x_real_time"]),
                         "-", _num(p.get("audio_per_cpu_s")), "-", "-", "-", "-", _mib(p.get("rss_peak_bytes")), "-"])
    for name, row in result.get("presets", {}).items():
        label = name + (" (reference)" if row.get("added_as_reference") else "")
        if row.get("error"):
            rows.append([label, f"failed: {row['error']}"] + ["-"] * 14)
            continue
        load = row.get("load_s")
        if row.get("prepare_s") is not None:
            load = (load or 0) + row["prepare_s"]
        rows.append([
            label, f"{row.get('mode', '')}; {row.get('rounds', 1)} round(s)", str(row.get("sentences", "")), _num(row.get("audio_seconds"), "{:.1f}"),
            _num(row.get("x_real_time")), _num(row.get("rtf"), "{:.3f}"), _num(row.get("sentences_per_s")),
            _x(row.get("vs_piper")), _x(row.get("vs_fp32")), _num(row.get("audio_per_cpu_s")), _num(load, "{:.1f}"),
            _num(row.get("first_call_s"), "{:.2f}"), _num(row.get("latency_p50_s"), "{:.2f}"),
            _num(row.get("latency_p95_s"), "{:.2f}"), _mib(row.get("rss_peak_bytes")), _vram_peak(row),
        ])
    return rows


SPEED_HEADER = [
    "Preset", "Mode", "Sentences", "Audio s", "x real time", "RTF", "Sentences/s", "vs piper", "vs FP32",
    "Audio s per CPU s", "Load s", "First call s", "p50 s", "p95 s", "Peak RSS MiB", "Peak VRAM MiB",
]


def quality_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, row in result.get("presets", {}).items():
        q = row.get("quality")
        if not q:
            continue
        if q.get("error"):
            rows.append([name, f"n/a: {q['error']}", "-", "-", "-", "-"])
            continue
        corr = f"{q['log_mel_correlation']:.4f} / {q['log_mel_correlation_mean']:.4f}"
        floor = _num(q.get("noise_floor_dbfs"), "{:.1f}", "n/a")
        if q.get("reference_noise_floor_dbfs") is not None:
            floor += f" (FP32 {q['reference_noise_floor_dbfs']:.1f}, {q.get('pauses', 0)} pauses)"
        dur = (f"{q['duration_diff_samples']:+d} samples ({q['duration_diff_pct']:+.3f}%); "
               f"largest sentence {q['max_item_duration_diff_samples']}")
        if q.get("wer") is not None:
            wer = f"{q['wer']:.3f} (FP32 {q['wer_reference']:.3f}, {q['wer_items']} sentences)"
        else:
            wer = q.get("wer_error", "-")
        rows.append([name, str(q.get("items", "")), corr, floor, dur, wer])
    return rows


QUALITY_HEADER = ["Preset", "Sentences", "Log-mel corr. (min / mean)", "Pause noise floor dBFS",
                  "Duration difference", "WER (FP32 on the same sentences)"]


def markdown(result: dict[str, Any]) -> str:
    """The whole report: context, speed table, quality table, targets, batch sweep, notes."""
    out: list[str] = ["# Studio benchmark", ""]
    text = result.get("text", {})
    settings = result.get("settings", {})
    out.append(f"- measured: {result.get('measured_at', '?')}"
               + (" (quick run: a few sentences only)" if result.get("quick") else ""))
    out.append(f"- machine: {result.get('machine_description', '?')}")
    note = load_note(result)
    if note:
        out.append(f"- {note}")
    voice = result.get("voice", {})
    out.append(f"- voice: {voice.get('id', '?')} ({voice.get('sample_rate', '?')} Hz); text: {text.get('sentences')} "
               f"sentences ({text.get('characters')} characters) of {text.get('source')}; latency sentence: "
               f"\"{text.get('latency_sentence')}\"")
    out.append(f"- synthesis: noise scale {settings.get('noise_scale')}, noise w {settings.get('noise_w')}, "
               f"length scale {settings.get('length_scale')} for every row (piper CLI included); up to "
               f"{result.get('rounds', 1)} timed round(s) of the whole text, interleaved across rows, the median "
               "shown (the torch CPU presets: one round)")
    if result.get("rounds_note"):
        out.append(f"- {result['rounds_note']}")
    if result.get("duration_s") is not None:
        out.append(f"- the whole run took {result['duration_s']:.0f} s"
                   + (f" ({result['asr_seconds']:.0f} s of it speech recognition)" if result.get("asr_seconds") else ""))
    whole = result.get("whole_process")
    if whole:
        from studio.measure.whole import markdown_table

        text = whole.get("text", {})
        out += ["", "## Whole processes on long prose", "",
                f"`studio render FILE --format wav --preset P` against `piper -m VOICE -i FILE -f out.wav`, each a "
                f"fresh process (start-up, model load and export included), on {text.get('words')} words of "
                f"{text.get('source')}.", ""]
        out += markdown_table(whole)
    out += ["", "## Steady-state synthesis (engines loaded and warm)", "", _table(SPEED_HEADER, speed_rows(result),
                                        ["l", "l"] + ["r"] * (len(SPEED_HEADER) - 2)), ""]
    out.append("x real time = audio seconds per compute second (whole text, engines loaded and warm); "
               "RTF = its inverse; vs piper = against the piper CLI's steady throughput (without its start-up); "
               "Audio s per CPU s = audio per CPU second of all the row's threads (moved less by other "
               "jobs on the machine than wall time); "
               "Load = model load (+ INT8 build or cache fetch); First call / p50 / p95 = latency of the latency "
               "sentence on the preset's engine with default threads; Peak RSS = the preset's process and its "
               "children.")
    qrows = quality_rows(result)
    if qrows:
        out += ["", "## Quality against FP32 (fp32-cpu), same sentences, noise 0", "",
                _table(QUALITY_HEADER, qrows, ["l", "r", "r", "l", "l", "l"]), ""]
        out.append("Log-mel correlation: 80 mel bands, the lowest sentence and the mean; pause noise floor: the "
                   "loudest of the quietest 50 ms in each pause FP32 renders as silence; WER: pocketsphinx, "
                   "a relative measure (FP32 itself scores well above 0).")
    tg = result.get("targets") or []
    if tg:
        out += ["", "## Targets", "", _table(
            ["Target", "Preset", "Goal", "Measured", "Verdict"],
            ([t["description"], t["preset"], t["target"],
              "-" if t["measured"] is None else _num(t["measured"], "{:.3f}"), t["verdict"]] for t in tg),
            ["l", "l", "l", "r", "l"]), ""]
    sweep = [(n, r) for n, r in result.get("presets", {}).items() if r.get("batch_sweep")]
    if sweep:
        sizes = sorted({p["batch_size"] for _, r in sweep for p in r["batch_sweep"]})
        rows = []
        for name, r in sweep:
            by = {p["batch_size"]: p for p in r["batch_sweep"]}
            rows.append([name, str(by[sizes[0]]["sentences"] if sizes[0] in by else "")]
                        + [_num(by[b]["x_real_time"]) if b in by else "-" for b in sizes]
                        + [f"{_num(r.get('x_real_time'))} ({r.get('mode', '')})"])
        out += ["", "## Speed (x real time) vs batch size", "",
                _table(["Preset", "Sentences"] + [f"batch {b}" for b in sizes] + ["render path"], rows), ""]
        out.append("One session with the library's default threads, batches padded to their longest item "
                   "(BatchedEngine), each size timed once after the rounds above -- on a shared machine compare "
                   "sizes within a row; the render path column is the throughput row above.")
    skipped = {n: r.get("batch_sweep_note") for n, r in result.get("presets", {}).items() if r.get("batch_sweep_note")}
    unavailable = result.get("unavailable") or {}
    if unavailable or skipped:
        out += ["", "## Not measured", ""]
        for name, why in unavailable.items():
            out.append(f"- {name}: unavailable here: {why}")
        for name, why in skipped.items():
            out.append(f"- {name} batch sweep: {why}")
    notes = [f"- {n}: {r['note']}" for n, r in result.get("presets", {}).items() if r.get("note")]
    describe = [f"- {n}: {' '.join(str(r['describe']).split())}" for n, r in result.get("presets", {}).items()
                if r.get("describe")]
    if notes or describe:
        out += ["", "## What ran", ""] + notes + describe
    piper = result.get("piper_cli") or {}
    if piper.get("command"):
        out.append(f"- piper CLI: `{piper['command']}` (text on stdin, one sentence per line)")
    files = result.get("files") or {}
    if files:
        out += ["", "## Plots", ""] + [f"![{k}]({v})" for k, v in files.items()]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------ plots


def write_plots(result: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    """speed vs batch size, latency distribution, throughput per preset -> PNG files."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    out_dir = Path(out_dir)
    files: dict[str, Path] = {}
    presets = {n: r for n, r in result.get("presets", {}).items() if not r.get("error")}
    piper = ((result.get("piper_cli") or {}).get("steady") or {}).get("x_real_time")
    stamp = f"{result.get('machine', {}).get('cpu', '')} - {str(result.get('measured_at', ''))[:16]}"

    # speed vs batch size
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    drawn = False
    for name, row in presets.items():
        pts = row.get("batch_sweep") or []
        if pts:
            line, = ax.plot([p["batch_size"] for p in pts], [p["x_real_time"] for p in pts], marker="o",
                            label=f"{name} (one session, batched)")
            drawn = True
            if row.get("streams"):
                ax.axhline(row["x_real_time"], linestyle="--", color=line.get_color(), linewidth=1,
                           label=f"{name}: {row['mode']} (render path)")
    if piper:
        ax.axhline(piper, linestyle=":", color="black", linewidth=1, label="piper CLI (steady)")
    if drawn:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no batch sweep in this run", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("batch size (sentences per engine call)")
    ax.set_ylabel("x real time (audio s / compute s)")
    ax.set_title(f"Speed vs batch size\n{stamp}", fontsize=9)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    files["speed_vs_batch"] = out_dir / PLOT_FILES["speed_vs_batch"]
    fig.savefig(files["speed_vs_batch"])
    plt.close(fig)

    # latency distribution
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    names = [n for n, r in presets.items() if r.get("latency_samples_s")]
    if names:
        data = [presets[n]["latency_samples_s"] for n in names]
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(names) + 1), names, fontsize=8)
        firsts = [presets[n].get("first_call_s") for n in names]
        ax.scatter([i + 1 for i, f in enumerate(firsts) if f], [f for f in firsts if f], marker="x", color="red",
                   label="first call (after load)", zorder=3)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(ticker.FormatStrFormatter("%g"))
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no latency samples", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("seconds per call (log)")
    ax.set_title(f"Latency: \"{result.get('text', {}).get('latency_sentence', '')}\"\n{stamp}", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    files["latency"] = out_dir / PLOT_FILES["latency"]
    fig.savefig(files["latency"])
    plt.close(fig)

    # throughput per preset
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    labels, values = [], []
    pc = result.get("piper_cli") or {}
    if pc.get("steady"):
        labels += ["piper CLI\n(steady)", "piper CLI\n(+start-up)"]
        values += [pc["steady"]["x_real_time"], pc["total"]["x_real_time"]]
    for name, row in presets.items():
        labels.append(name)
        values.append(row.get("x_real_time") or 0.0)
    if labels:
        bars = ax.bar(range(len(labels)), values, color=["#999999" if lb.startswith("piper") else "#3b75af"
                                                          for lb in labels])
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        for b, v in zip(bars, values):
            ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=7)
    ax.set_ylabel("x real time (audio s / compute s)")
    ax.set_title(f"Throughput on the book text\n{stamp}", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    files["throughput"] = out_dir / PLOT_FILES["throughput"]
    fig.savefig(files["throughput"])
    plt.close(fig)
    return files


__all__ = ["markdown", "write_plots", "speed_rows", "quality_rows", "load_note", "PLOT_FILES"]
