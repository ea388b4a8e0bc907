package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// axe-core, the accessibility checker, is an npm package of this folder
// (axe/package.json, pinned by axe/package-lock.json), installed by
// `npm ci` in axe/ (.ci/run does it); its node_modules is not committed.

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

// axePath is where npm ci puts axe-core's browser build.
func axePath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "axe", "node_modules", "axe-core", "axe.min.js")
}

func loadAxe() (string, error) {
	axeOnce.Do(func() {
		var b []byte
		b, axeErr = os.ReadFile(axePath())
		axeSource = string(b)
	})
	return axeSource, axeErr
}

// Violation is one rule of axe-core the page breaks: its id, how much it
// matters ("minor", "moderate", "serious", "critical"), what it asks, and
// the elements that break it (a CSS selector and axe's summary of each).
type Violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s (%s): %s: %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
}

// axeRun runs axe-core on the document for the WCAG 2.0, 2.1 and 2.2 A and
// AA rules, and returns its violations as JSON.
const axeRun = `(async () => {
	const r = await axe.run(document, {
		runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"] },
		resultTypes: ["violations"],
	});
	return JSON.stringify(r.violations.map((v) => ({
		id: v.id, impact: v.impact || "", help: v.help,
		nodes: v.nodes.slice(0, 5).map((n) => n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\s+/g, " ")),
	})));
})()`

// Axe runs axe-core in the page as it is now and returns the WCAG A and
// AA rules it breaks. Without axe-core installed it skips the test,
// except when CI=true, where it fails it.
func (b *Tab) Axe() []Violation {
	b.t.Helper()
	src, err := loadAxe()
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.t.Fatalf("axe-core: %v; CI must have it (npm ci in internal/browsertest/axe)", err)
		}
		b.t.Skipf("axe-core: %v (outside CI): run npm ci in internal/browsertest/axe to run the accessibility checks", err)
	}
	if b.Eval(`typeof axe`) != "object" {
		b.Eval(src + `; "loaded"`)
	}
	raw := Run(b, "run axe-core", chromedp.Evaluate[string](axeRun, chromedp.EvalAwaitPromise))
	var out []Violation
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		b.t.Fatalf("axe-core's answer %q: %v", raw, err)
	}
	return out
}

// Serious is the violations that are serious or critical.
func Serious(vs []Violation) []Violation {
	var out []Violation
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			out = append(out, v)
		}
	}
	return out
}

// Viewport sets the page's viewport to width by height CSS pixels; mobile
// emulates a phone (overlay scroll bars, the viewport meta tag).
func (b *Tab) Viewport(width, height int64, mobile bool) {
	b.t.Helper()
	Run(b, fmt.Sprintf("set the viewport to %d×%d", width, height), func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tgt, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: width, Height: height, DeviceScaleFactor: 1, Mobile: mobile,
		})
		return chromedp.Void{}, err
	})
}

// ColorScheme has the page see prefers-color-scheme as scheme ("light"
// or "dark").
func (b *Tab) ColorScheme(scheme string) {
	b.t.Helper()
	Run(b, "prefer the "+scheme+" colour scheme", func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tgt, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return chromedp.Void{}, err
	})
}

// Screenshot saves a PNG of the viewport as name.png in the folder
// SYMPHONIX_SCREENSHOTS names, when it names one (CI keeps them as the
// run's artefacts); otherwise it does nothing. It returns the file written,
// or "".
func (b *Tab) Screenshot(name string) string {
	b.t.Helper()
	dir := os.Getenv("SYMPHONIX_SCREENSHOTS")
	if dir == "" {
		return ""
	}
	png := Run(b, "take a screenshot", func(ctx context.Context, tgt *chromedp.Target) ([]byte, error) {
		res, err := cdp.Call(ctx, tgt, page.CaptureScreenshot, page.CaptureScreenshotParams{})
		return res.Data, err
	})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatalf("screenshots: %v", err)
	}
	file := filepath.Join(dir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	return file
}

// OnEveryPage has the tab run the JavaScript source in every page it
// loads from now on, before the page's own scripts.
func (b *Tab) OnEveryPage(source string) {
	b.t.Helper()
	Run(b, "add a script to every page", func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tgt, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: source})
		return chromedp.Void{}, err
	})
}

// Grant grants origin the browser permission name ("notifications"), as a
// person answering the browser's prompt would.
func (b *Tab) Grant(origin, name string) {
	b.t.Helper()
	Run(b, "grant "+name+" to "+origin, func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tgt, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: origin,
		})
		return chromedp.Void{}, err
	})
}
