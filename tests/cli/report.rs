//! `sum2act report`: a self-contained HTML page for run directories, checked as data and, when
//! Chromium is installed, rendered headless: a click on a query opens its trajectory, and a
//! screenshot is taken.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::Test;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Two small runs (sum2act and react) against a scripted model; returns their directories.
fn two_runs(root: &Path) -> (PathBuf, PathBuf) {
    let (url, thread, stop) = common::mock_openai::MockOpenAi::spawn_thread(Duration::ZERO);
    let a = root.join("sum2act-run");
    let b = root.join("react-run");
    for (dir, method) in [(&a, "sum2act"), (&b, "react")] {
        Test::new()
            .env("OPENAI_BASE_URL", &url)
            .args([
                "batch",
                "--model",
                "mock",
                "--progress",
                "off",
                "--subsets",
                "G1_instruction,G2_category",
            ])
            .args(["--limit", "2", "--method", method, "--out"])
            .arg(dir)
            .run()
            .success();
    }
    let _ = stop.send(());
    let _ = thread.join();
    (a, b)
}

const CHROMIUM_ARGS: [&str; 5] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--allow-file-access-from-files",
    "--virtual-time-budget=5000",
];

/// Loads `report` (in `dir`) in a frame of a page run by headless Chromium, runs `probe` (a function
/// body with the frame's document as `doc`, returning a string) once it has loaded, and returns what
/// it returned.
fn probe_in_chromium(dir: &Path, report: &str, probe: &str) -> String {
    probe_in_chromium_at(dir, report, &[1260], probe).remove(0)
}

/// As [`probe_in_chromium`], once per frame width (pixels), all in one Chromium start: its start is
/// most of a probe's time on 2 cores. The probe results come back in the order of `widths`.
fn probe_in_chromium_at(dir: &Path, report: &str, widths: &[u32], probe: &str) -> Vec<String> {
    let wrapper = dir.join("probe.html");
    let frames: String = widths
        .iter()
        .enumerate()
        .map(|(i, width)| {
            format!(
                r#"<pre id="result{i}">PENDING</pre>
<iframe id="f{i}" src="{report}" style="width:{width}px;height:900px;border:0;display:block"></iframe>
"#
            )
        })
        .collect();
    std::fs::write(
        &wrapper,
        format!(
            r##"<!DOCTYPE html><html><body style="margin:0">
{frames}<script>
document.querySelectorAll("iframe").forEach((frame, i) => frame.addEventListener("load", () => {{
  const doc = frame.contentDocument;
  const probe = () => {{ {probe} }};
  document.getElementById("result" + i).textContent = "RESULT" + i + " " + probe();
}}));
</script></body></html>"##
        ),
    )
    .unwrap();
    let dom = Command::new(CHROMIUM)
        .args(CHROMIUM_ARGS)
        .arg("--dump-dom")
        .arg(format!("file://{}", wrapper.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    (0..widths.len())
        .map(|i| {
            let tag = format!("RESULT{i} ");
            dom.lines()
                .find_map(|l| l.split_once(tag.as_str()).map(|(_, r)| r.to_string()))
                .unwrap_or_else(|| panic!("the page did not run in frame {i}: {dom}"))
        })
        .collect()
}

#[test]
fn report_is_one_self_contained_file_with_all_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    let out = dir.path().join("report.html");
    Test::new()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .run()
        .success()
        .stdout_has("2 run(s), 8 episodes");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "no external resources"
    );
    for remote in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(
            !html.contains(remote),
            "page loads a remote resource ({remote})"
        );
    }
    let data = common::report_data(&html);
    let runs = data["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["method"], "sum2act");
    assert_eq!(runs[1]["method"], "react");
    let eps = runs[0]["episodes"].as_array().unwrap();
    assert_eq!(eps.len(), 4);
    assert!(
        eps[0]["steps"].as_array().is_some_and(|s| !s.is_empty()),
        "steps are embedded"
    );
    assert!(eps[0]["query"].as_str().is_some_and(|q| !q.is_empty()));

    // Default output lands in the first run directory; a non-run directory is bad input.
    Test::new().arg("report").arg(&a).run().success();
    assert!(a.join("report.html").is_file());
    Test::new()
        .arg("report")
        .arg(dir.path().join("nope"))
        .run()
        .failure(2)
        .stderr_has("nope");
}

#[test]
fn report_renders_in_headless_chromium_and_a_click_opens_a_trajectory() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: {CHROMIUM} not installed (apt-get install chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    let report = dir.path().join("report.html");
    Test::new()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&report)
        .run()
        .success();
    // Click the first query of the viewer like a user, and copy what the detail pane then shows.
    let result = probe_in_chromium(
        dir.path(),
        "report.html",
        r##"
  const items = doc.querySelectorAll(".q-item");
  items[0].click();
  const title = doc.getElementById("detail-title");
  const steps = doc.querySelectorAll("#detail .step").length;
  const svgBars = doc.querySelectorAll("#chart rect").length;
  const search = doc.getElementById("search");
  search.value = "zzzz-no-such-text";
  search.dispatchEvent(new Event("input"));
  const afterSearch = doc.querySelectorAll(".q-item").length;
  search.value = ""; search.dispatchEvent(new Event("input"));
  const simTags = doc.querySelectorAll(".q-item .t-simulated").length;
  const data = JSON.parse(doc.querySelector('script[type="application/json"]').textContent);
  const simData = data.runs.flatMap(r => r.episodes).filter(e => e.all_simulated).length;
  const firstSim = [...doc.querySelectorAll(".q-item")].find(x => x.querySelector(".t-simulated"));
  if (firstSim) firstSim.click();
  const simDetail = doc.getElementById("all-simulated") ? 1 : 0;
  return "sim=" + simTags + "/" + simData + " simdetail=" + simDetail + " items=" + items.length + " title=" + (title ? title.textContent : "none") + " steps=" + steps + " bars=" + svgBars + " filtered=" + afterSearch;
"##,
    );
    assert!(result.contains("items=8"), "{result}");
    // Episodes answered only by the schema simulator are tagged in the list and said so in the detail.
    let sim = result
        .split_whitespace()
        .find_map(|w| w.strip_prefix("sim="))
        .and_then(|s| s.split_once('/'))
        .unwrap_or_else(|| panic!("{result}"));
    assert_eq!(sim.0, sim.1, "one tag per all-simulated episode: {result}");
    assert!(
        sim.1 != "0",
        "the fixture has all-simulated episodes: {result}"
    );
    assert!(result.contains("simdetail=1"), "{result}");
    assert!(
        result.contains("query"),
        "the click opened a trajectory: {result}"
    );
    assert!(!result.contains("steps=0"), "{result}");
    assert!(!result.contains("bars=0"), "{result}");
    assert!(
        result.contains("filtered=0"),
        "search filters the list: {result}"
    );

    let shot = dir.path().join("report.png");
    let status = Command::new(CHROMIUM)
        .args(CHROMIUM_ARGS)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,1000")
        .arg(format!("file://{}", report.display()))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.len() > 10_000 && png.starts_with(b"\x89PNG"),
        "screenshot of {} bytes",
        png.len()
    );
}

/// A judged run (evidence mode, the mock judge) of four answers, two of which give the amount.
fn judged_run(root: &Path, labels: Option<&Path>) -> PathBuf {
    let (url, _) = common::judged::mock_judge();
    let run = common::judged::run_dir(
        root,
        "react",
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("250 EUR makes 42,230 JPY.")),
            (103, Some("I could not convert it.")),
            (104, None),
        ],
    );
    let mut eval = Test::new()
        .arg("eval")
        .arg(&run)
        .args(["--base-url", &url, "--judge", "mock-judge", "--votes", "1"])
        .args(["--judge-mode", "evidence"]);
    if let Some(l) = labels {
        eval = eval.arg("--labels").arg(l);
    }
    eval.run().success();
    run
}

/// `sum2act report RUN --out DIR/report.html`, and the page.
fn report_of(dir: &Path, run: &Path) -> String {
    let out = dir.join("report.html");
    Test::new()
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(&out)
        .run()
        .success();
    std::fs::read_to_string(&out).unwrap()
}

/// The headline section of a report page.
fn headline_section(html: &str) -> &str {
    let start = html
        .find("<section id=\"headline\">")
        .expect("headline section");
    let end = start + html[start..].find("</section>").expect("end of headline");
    &html[start..end]
}

#[test]
fn an_uncalibrated_judge_does_not_lead_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let run = judged_run(dir.path(), None);
    let html = report_of(dir.path(), &run);
    let head = headline_section(&html);
    assert!(
        head.contains("<td class=\"lead\">not measured</td>"),
        "{head}"
    );
    assert!(
        head.contains("uncalibrated judge: agreement not measured"),
        "{head}"
    );
    assert!(
        head.contains("50.0% (uncalibrated judge) by mock-judge (evidence judge)"),
        "{head}"
    );
    // The headline and the judge-free chart come before the judge's chart.
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at("<section id=\"headline\">") < at("<section id=\"free\">"));
    assert!(at("<section id=\"free\">") < at("<section id=\"rates\">"));
    let data = common::report_data(&html);
    let judge = &data["runs"][0]["judge"];
    assert_eq!(judge["trusted"], false);
    assert_eq!(judge["threshold"], 0.7);
    assert_eq!(judge["evidence_backed"], 50.0);
}

#[test]
fn a_calibrated_judge_leads_with_its_agreement_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.json");
    std::fs::write(
        &labels,
        r#"{"G1_instruction/101": "Solved", "G1_instruction/102": "Solved", "G1_instruction/103": "Unsolved"}"#,
    )
    .unwrap();
    let run = judged_run(dir.path(), Some(&labels));
    let html = report_of(dir.path(), &run);
    let head = headline_section(&html);
    // Hand labels exist: they lead, the calibrated judge beside them.
    assert!(
        head.contains("<td class=\"lead\">66.7%</td><td class=\"l wrap\">solved by hand labels (2 of 3 labelled answers)"),
        "{head}"
    );
    assert!(
        head.contains("calibrated judge: agreement 100.0%, kappa 1.00, n = 3"),
        "{head}"
    );
    assert!(!head.contains("uncalibrated"), "{head}");
    assert_eq!(
        common::report_data(&html)["runs"][0]["judge"]["trusted"],
        true
    );
}

#[test]
fn uncalibrated_verdicts_are_marked_and_chart_labels_do_not_overlap_in_chromium() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: {CHROMIUM} not installed (apt-get install chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = judged_run(dir.path(), None);
    report_of(dir.path(), &run);
    let result = probe_in_chromium(
        dir.path(),
        "report.html",
        r##"
  const boxes = [...doc.querySelectorAll("#chart .group-label")].map(t => t.getBBox());
  let overlaps = 0;
  for (let i = 1; i < boxes.length; i++) if (boxes[i].x < boxes[i - 1].x + boxes[i - 1].width) overlaps++;
  const solved = doc.querySelectorAll(".q-item .t-Solved").length;
  const uncal = [...doc.querySelectorAll(".q-item .t-uncal")].map(t => t.textContent);
  doc.querySelectorAll(".q-item")[0].click();
  const standing = doc.getElementById("verdict-standing");
  return "labels=" + boxes.length + " overlaps=" + overlaps + " solved=" + solved + " uncal=" + uncal.length + " first=" + uncal[0]
    + " title=" + doc.getElementById("rates-title").textContent.slice(0, 40) + " | standing=" + (standing ? standing.textContent : "none");
"##,
    );
    assert!(result.contains("labels=2 overlaps=0"), "{result}");
    assert!(
        result.contains("solved=0 uncal=4"),
        "no green Solved badge: {result}"
    );
    assert!(result.contains("first=judge says"), "{result}");
    assert!(
        result.contains("title=Pass rate per subset — by an uncalibr"),
        "{result}"
    );
    assert!(
        result.contains("standing=The verdict below is the verdict of an uncalibrated judge"),
        "{result}"
    );
}

/// Issue 42 item 14: a run whose answers are all evidence-backed but whose labels say most are wrong
/// leads with the labels, in a labelled chart before the evidence chart.
#[test]
fn hand_labels_lead_the_report_over_the_evidence_check() {
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.json");
    std::fs::write(
        &labels,
        r#"{"G1_instruction/101": "Solved", "G1_instruction/102": "Unsolved", "G1_instruction/103": "Unsolved"}"#,
    )
    .unwrap();
    let run = judged_run(dir.path(), Some(&labels));
    let html = report_of(dir.path(), &run);
    let head = headline_section(&html);
    let lead = head.find("<td class=\"lead\">33.3%</td>");
    assert!(lead.is_some(), "{head}");
    assert!(
        head.contains("solved by hand labels (1 of 3 labelled answers)"),
        "{head}"
    );
    assert!(lead < head.find("<td>50.0%</td>"), "{head}");
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at("<section id=\"labelled\"") < at("<section id=\"free\">"));
    let data = common::report_data(&html);
    assert_eq!(data["runs"][0]["labels"]["solved"], 1);
    assert_eq!(
        data["runs"][0]["labels"]["subsets"]["G1_instruction"],
        serde_json::json!([1, 3])
    );
}

/// Issue 42 item 14: the page is no wider than the window, on a laptop and on a narrow one.
#[test]
fn the_report_fits_the_window_in_chromium() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: {CHROMIUM} not installed (apt-get install chromium)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.json");
    std::fs::write(&labels, r#"{"G1_instruction/101": "Solved"}"#).unwrap();
    let run = judged_run(dir.path(), Some(&labels));
    let html = report_of(dir.path(), &run);
    // One label, judged alike: kappa is 0/0, not a perfect 1.00 (issue 42 item 15).
    assert!(html.contains("kappa undefined (labels and verdicts all alike), n = 1"));
    let widths = [1260, 700];
    let results = probe_in_chromium_at(
        dir.path(),
        "report.html",
        &widths,
        r##"
  doc.querySelectorAll(".q-item")[0].click();
  const e = doc.documentElement;
  const wide = [...doc.querySelectorAll("body *")].filter(x => x.getBoundingClientRect().right > e.clientWidth + 1 && !x.closest(".scroll,#cost-table,#tool-table,.chart")).slice(0, 8).map(x => x.tagName + "#" + x.id + "." + x.className + ":" + Math.round(x.getBoundingClientRect().right)).join(",");
  return "overflow=" + (e.scrollWidth - e.clientWidth) + " labelled=" + !doc.getElementById("labelled").hidden + " wide=" + wide;
"##,
    );
    for (width, result) in widths.iter().zip(&results) {
        assert!(
            result.contains("overflow=0 labelled=true"),
            "{width}px: {result}"
        );
    }
}
