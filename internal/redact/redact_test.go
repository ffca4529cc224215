package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "http://user:s3cret@host:8080/p?q=1", want: "http://user:xxxxx@host:8080/p?q=1"},
		{in: "https://tok3n@host/p", want: "https://xxxxx@host/p"},
		{in: "http://host/p", want: "http://host/p"},
		{in: "http://host/p?email=a@b", want: "http://host/p?email=a@b"},
		{in: "", want: ""},
		{in: "http://us er:s3cret@ho st/%zz", want: "http://xxxxx@ho st/%zz"},
		{in: "user:s3cret@host", want: "xxxxx@host"},
		{in: "http://a:b@c:s3cret@host/", want: "http://a:xxxxx@host/"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := URL(tt.in)
			if got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if strings.Contains(got, "s3cret") || strings.Contains(got, "tok3n") {
				t.Errorf("URL(%q) = %q still holds the secret", tt.in, got)
			}
		})
	}
}

func FuzzURL(f *testing.F) {
	f.Add("http://user:s3cret@host/p")
	f.Add("http://h@x:s3cret@host/")
	f.Fuzz(func(t *testing.T, in string) {
		got := URL(in)
		if !strings.Contains(in, "@") && got != in {
			t.Fatalf("URL(%q) = %q changed a URL without userinfo", in, got)
		}
	})
}
