// Command hbtd-null is the ceiling the hbtd benchmark compares against: a Go
// net/http server whose handler only reads the request body and answers 200.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:28599", "HOST:PORT to serve on")
	flag.Parse()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
	log.Fatal(http.ListenAndServe(*listen, h))
}
