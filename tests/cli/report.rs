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
    // A page that loads the report in a frame, clicks the first query of the viewer like a user, and
    // copies what the detail pane then shows into its own DOM.
    let wrapper = dir.path().join("click.html");
    std::fs::write(
        &wrapper,
        r##"<!DOCTYPE html><html><body style="margin:0">
<pre id="result">PENDING</pre>
<iframe id="f" src="report.html" style="width:1260px;height:900px;border:0"></iframe>
<script>
document.getElementById("f").addEventListener("load", () => {
  const doc = document.getElementById("f").contentDocument;
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
  document.getElementById("result").textContent = "RESULT sim=" + simTags + "/" + simData + " simdetail=" + simDetail + " items=" + items.length + " title=" + (title ? title.textContent : "none") + " steps=" + steps + " bars=" + svgBars + " filtered=" + afterSearch;
});
</script></body></html>"##,
    )
    .unwrap();
    let url = format!("file://{}", wrapper.display());
    let common_args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--allow-file-access-from-files",
        "--virtual-time-budget=5000",
    ];
    let dom = Command::new(CHROMIUM)
        .args(common_args)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    let result = dom
        .lines()
        .find(|l| l.contains("RESULT"))
        .unwrap_or_else(|| panic!("the page did not run: {dom}"));
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
        .args(common_args)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,1000")
        .arg(&url)
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
