#!/usr/bin/env python3
"""`aic-onnx opt IN OUT --html PAGE` in a real browser (Debian's headless Chromium).

For PaddleOCR rec (skipped with exit 77 and a message when ../shared/models
lacks it):
- both sides draw as many nodes as opt reports before and after (nodes: N -> M);
- no script errors (the page writes them into #errors, read here);
- a real mouse click on an optimized node that a rule made opens its panel,
  naming the rule, and marks the original nodes it stands for on the left;
  clicking one of those links selects it there and names what replaced it;
- clicking an original node that was folded says so;
- `#find=RULE` lists the nodes that rule made;
- the page is interactive within 3 s of navigation (best of 3 loads);
- a --html path in a missing folder fails before any work: one line, exit 2.

Drives Chromium with html_report_browser.py's DevTools-protocol Browser.

usage: html_opt_browser.py AIC_ONNX_BINARY MODELS_DIR [--screenshot PNG]
--screenshot writes the page with a fused Conv's panel open (docs/opt_html.png
is made so). Exit 77 without chromium or the model.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_report_browser import Browser, find_chromium  # noqa: E402

SKIP = 77
RENDER_LIMIT_MS = 3000
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


STATE = """(() => {
  const p = document.getElementById('panel');
  const t = document.getElementById('panel-title');
  const rule = document.getElementById('panel-rule'), fate = document.getElementById('panel-fate');
  return {a: document.querySelectorAll('#a-graph g.nodes g.n').length,
          b: document.querySelectorAll('#b-graph g.nodes g.n').length,
          drawnA: document.body.dataset.nodesDrawnA, drawnB: document.body.dataset.nodesDrawnB,
          errors: document.getElementById('errors').textContent,
          panel: p.hidden ? null : (t ? t.textContent : ''),
          rule: rule ? rule.textContent : null, fate: fate ? fate.textContent : null,
          rel: document.querySelectorAll('#a-graph g.n.rel').length,
          relB: document.querySelectorAll('#b-graph g.n.rel').length,
          links: Array.from(p.querySelectorAll('ul.links-a a')).map(a => +a.dataset.node),
          renderMs: +document.body.dataset.renderMs};
})()"""


def center_of(b, side, i):
    """Screen position of node i of a side after centring it there (as a link does)."""
    return b.eval(f"""(() => {{
      const g = document.querySelector('#{side}-graph g.n[data-i="{i}"]');
      const c = document.getElementById('{side}-canvas').getBoundingClientRect();
      let r = g.getBoundingClientRect();
      if (r.left < c.left || r.right > c.right || r.top < c.top || r.bottom > c.bottom) return null;
      return [r.left + r.width / 2, r.top + r.height / 2];
    }})()""")


def centred(b, side, i):
    """Centres node i of a side (#a=I / #b=I, which opens its panel), closes the
    panel (the panes widen, the node stays in view) and returns where it is."""
    b.eval(f"location.hash = '#{side}={i}'")
    time.sleep(0.2)
    b.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Escape", "code": "Escape",
                                      "windowsVirtualKeyCode": 27})
    b.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Escape", "code": "Escape",
                                      "windowsVirtualKeyCode": 27})
    time.sleep(0.2)
    if b.eval("document.getElementById('panel').hidden") is not True:
        return None
    return center_of(b, side, i)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    binary, models = sys.argv[1], sys.argv[2]
    screenshot = None
    if "--screenshot" in sys.argv:
        screenshot = os.path.abspath(sys.argv[sys.argv.index("--screenshot") + 1])
    chromium = find_chromium()
    if chromium is None:
        print("SKIP: no chromium")
        return SKIP
    rec = os.path.join(models, "ppocr_rec.onnx")
    if not os.path.exists(rec):
        print(f"SKIP: {rec} not found (PaddleOCR rec's opt page not checked)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        # A bad --html path: refused before any work, like a bad OUT.
        p = subprocess.run([binary, "opt", rec, os.path.join(tmp, "o.onnx"), "--no-verify",
                            "--html", os.path.join(tmp, "no", "such", "page.html")], capture_output=True, text=True)
        check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "no folder" in p.stderr
              and not os.path.exists(os.path.join(tmp, "o.onnx")),
              f"bad --html path: exit {p.returncode}, stderr {p.stderr.strip()!r}")

        html = os.path.join(tmp, "rec.html")
        t = time.time()
        p = subprocess.run([binary, "opt", rec, os.path.join(tmp, "rec_opt.onnx"), "--no-verify", "--html", html],
                           capture_output=True, text=True)
        if not check(p.returncode == 0, f"opt --html exited {p.returncode}: {p.stderr.strip()}"):
            return 1
        m = re.search(r"^nodes: (\d+) -> (\d+)$", p.stdout, re.M)
        before, after = int(m.group(1)), int(m.group(2))
        print(f"PaddleOCR rec: {before} -> {after} nodes, opt --html took {time.time() - t:.1f} s "
              f"({os.path.getsize(html) // 1024} KiB)")
        url = "file://" + html
        b = Browser(chromium)
        try:
            best = None
            for _ in range(3):
                b.open(url)
                s = b.eval(STATE)
                best = s["renderMs"] if best is None else min(best, s["renderMs"])
                print(f"PaddleOCR rec: interactive {s['renderMs']} ms after navigation")
                if best < RENDER_LIMIT_MS:
                    break
            check(best < RENDER_LIMIT_MS, f"best load {best} ms, limit {RENDER_LIMIT_MS} ms")
            check(s["errors"] == "", f"script errors: {s['errors']}")
            check(s["a"] == before and s["drawnA"] == str(before), f"original: {s['a']} nodes drawn, opt says {before}")
            check(s["b"] == after and s["drawnB"] == str(after), f"optimized: {s['b']} nodes drawn, opt says {after}")
            check(s["panel"] is None, f"a panel is open before any click: {s['panel']}")

            # An optimized node a rule made: fuse_conv_bn's Conv (six in the model).
            i = b.eval("(() => { const d = JSON.parse(document.getElementById('opt-data').textContent); "
                       "return d.b.findIndex(n => n.rule === 'fuse_conv_bn'); })()")
            check(i >= 0, "no optimized node made by fuse_conv_bn")
            at = centred(b, "b", i)
            if check(at is not None, f"optimized node {i} not in view after #b={i}"):
                b.click(*at)
                s = b.eval(STATE)
                check(s["panel"] is not None and s["panel"].startswith(f"Optimized node {i}: Conv"),
                      f"click on optimized node {i} shows panel {s['panel']!r}")
                check(s["rule"] == "fuse_conv_bn", f"optimized node {i}'s panel names rule {s['rule']!r}")
                check(s["rel"] >= 2 and len(s["links"]) >= 2,
                      f"optimized node {i}: {s['rel']} original nodes marked, {len(s['links'])} linked")
                # Follow the link to the BatchNormalization it replaced.
                bn = b.eval(f"""(() => {{ const d = JSON.parse(document.getElementById('opt-data').textContent);
                  return d.b[{i}].rep.find(k => d.a[k].op === 'BatchNormalization'); }})()""")
                b.eval(f"document.querySelector('#panel ul.links-a a[data-node=\"{bn}\"]').click()")
                s = b.eval(STATE)
                check(s["panel"] is not None and s["panel"].startswith(f"Original node {bn}: BatchNormalization"),
                      f"the link to original node {bn} shows {s['panel']!r}")
                check(s["relB"] == 1, f"original node {bn}: {s['relB']} optimized nodes marked, want 1")
                if screenshot:
                    b.call("Emulation.setDeviceMetricsOverride",
                           {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
                    b.open(url)
                    at = centred(b, "b", i)
                    if at is not None:
                        b.click(*at)
                        time.sleep(0.3)
                        b.screenshot(screenshot)
                        print("wrote", screenshot)
                    b.call("Emulation.clearDeviceMetricsOverride")
            # A folded original node says so.
            f = b.eval("(() => { const d = JSON.parse(document.getElementById('opt-data').textContent); "
                       "return d.a.findIndex(n => n.fate === 'folded'); })()")
            if check(f >= 0, "no folded original node"):
                at = centred(b, "a", f)
                if check(at is not None, f"original node {f} not in view after #a={f}"):
                    b.click(*at)
                    s = b.eval(STATE)
                    check(s["fate"] is not None and s["fate"].startswith("folded"),
                          f"folded original node {f}: panel says {s['fate']!r}")
            # Search by rule.
            b.open(url + "#find=fuse_conv_bn")
            hits = b.eval("document.getElementById('hit-count').textContent")
            check(hits == "6 nodes", f"#find=fuse_conv_bn: {hits!r}, want '6 nodes'")
            check(b.eval(STATE)["errors"] == "", "script errors after the clicks")
        finally:
            b.close()
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("opt --html in Chromium: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
