package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// page serves the chat page: index.html, its script and its style, all
// from the binary. The script reaches the page only through textContent,
// never as HTML, and the Content-Security-Policy allows no inline script
// or style.
func page() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
