package ipxe

import (
	"context"
	"strconv"

	"github.com/hmsuite/hms/internal/problem"
)

// keys are the store keys a request names: hosts as given, MACs normalised,
// NIDs as nid<N>.
func paramKeys(bp *BootParams) []string {
	var out []string
	for _, h := range bp.Hosts {
		out = append(out, h)
	}
	for _, m := range bp.MACs {
		out = append(out, normMAC(m))
	}
	for _, n := range bp.NIDs {
		out = append(out, nidKey(n))
	}
	return out
}

// Post stores bp unless its first kind of key (hosts, else MACs, NIDs,
// kernel, initrd) already exists. It returns the referral token it issued
// ("" for an image-only request).
func (s *Service) Post(ctx context.Context, bp BootParams) (string, error) {
	s.store.wmu.Lock()
	defer s.store.wmu.Unlock()
	if name, ok := s.firstExisting(&bp); ok {
		return "", problem.Invalidf("Bad Request: Already exists: %s", name)
	}
	return s.putLocked(ctx, bp)
}

// firstExisting checks only the first non-empty kind, as hms-bss does.
func (s *Service) firstExisting(bp *BootParams) (string, bool) {
	switch {
	case len(bp.Hosts) > 0:
		for _, h := range bp.Hosts {
			if _, ok := s.store.entry(h); ok {
				return h, true
			}
		}
	case len(bp.MACs) > 0:
		for _, m := range bp.MACs {
			if _, ok := s.store.entry(normMAC(m)); ok {
				return m, true
			}
		}
	case len(bp.NIDs) > 0:
		for _, n := range bp.NIDs {
			if _, ok := s.store.entry(nidKey(n)); ok {
				return strconv.Itoa(int(n)), true
			}
		}
	case bp.Kernel != "":
		_, ok := s.store.image(kindKernel, bp.Kernel)
		return bp.Kernel, ok
	case bp.Initrd != "":
		_, ok := s.store.image(kindInitrd, bp.Initrd)
		return bp.Initrd, ok
	}
	return "", false
}

// Put creates or replaces the entries bp names and returns the referral
// token it issued ("" for an image-only request).
func (s *Service) Put(ctx context.Context, bp BootParams) (string, error) {
	s.store.wmu.Lock()
	defer s.store.wmu.Unlock()
	return s.putLocked(ctx, bp)
}

func (s *Service) putLocked(ctx context.Context, bp BootParams) (string, error) {
	ch := newChange()
	keys := paramKeys(&bp)
	token := ""
	if len(keys) > 0 {
		token = newToken()
	}
	for _, k := range keys {
		ch.put[k] = &Entry{Params: bp.Params, Kernel: bp.Kernel, Initrd: bp.Initrd,
			CloudInit: cloneCloudInit(bp.CloudInit), Token: token}
	}
	// An image-only request stores the image's own parameters; otherwise
	// the parameters belong to the entries and the image keeps its own.
	for kind, path := range map[string]string{kindKernel: bp.Kernel, kindInitrd: bp.Initrd} {
		if path == "" {
			continue
		}
		if len(keys) == 0 {
			ch.putImages[imageKey{kind, path}] = Image{Path: path, Params: bp.Params}
		} else if _, ok := s.store.image(kind, path); !ok {
			ch.putImages[imageKey{kind, path}] = Image{Path: path}
		}
	}
	return token, s.store.apply(ctx, ch)
}

func cloneCloudInit(ci CloudInit) CloudInit {
	return CloudInit{MetaData: cloneObject(ci.MetaData), UserData: cloneObject(ci.UserData), PhoneHome: ci.PhoneHome}
}

// Patch updates the entries bp names: params when given, meta-data and
// user-data merged as JSON merge patches, phone-home replaced when any of
// its fields is set. Kernel and initrd are kept, as hms-bss's Update keeps
// them (PUT changes them). A named host
// without an entry is ErrNotFound; so is a MAC or NID HSM knows whose
// node has no entry; other MACs and NIDs without an entry are skipped.
func (s *Service) Patch(ctx context.Context, bp BootParams) error {
	s.store.wmu.Lock()
	defer s.store.wmu.Unlock()
	ch := newChange()
	var targets []string
	for _, h := range bp.Hosts {
		if _, ok := s.store.entry(h); !ok {
			return notFoundKey(h)
		}
		targets = append(targets, h)
	}
	for _, m := range bp.MACs {
		k, err := s.patchTarget(normMAC(m), func() (*Node, bool) { return s.cache.ByMAC(m) })
		if err != nil {
			return err
		}
		targets = append(targets, k...)
	}
	for _, n := range bp.NIDs {
		k, err := s.patchTarget(nidKey(n), func() (*Node, bool) { return s.cache.ByNID(int(n)) })
		if err != nil {
			return err
		}
		targets = append(targets, k...)
	}
	for _, k := range targets {
		old, _ := s.store.entry(k)
		ch.put[k] = patched(old, &bp)
	}
	return s.store.apply(ctx, ch)
}

// patchTarget is the key a MAC or NID patch applies to: its own entry, else
// (when HSM knows its node) the node's xname entry, else not found.
func (s *Service) patchTarget(key string, node func() (*Node, bool)) ([]string, error) {
	if _, ok := s.store.entry(key); ok {
		return []string{key}, nil
	}
	n, ok := node()
	if !ok {
		return nil, nil
	}
	if _, ok := s.store.entry(n.ID); ok {
		return []string{n.ID}, nil
	}
	return nil, notFoundKey(key)
}

func notFoundKey(k string) error {
	return problem.NotFoundf("Not Found: Error looking up %s: Key /params/%s does not exist", k, k)
}

func patched(old *Entry, bp *BootParams) *Entry {
	e := *old
	if bp.Params != "" {
		e.Params = bp.Params
	}
	e.CloudInit = CloudInit{
		MetaData:  mergePatch(cloneObject(old.CloudInit.MetaData), bp.CloudInit.MetaData),
		UserData:  mergePatch(cloneObject(old.CloudInit.UserData), bp.CloudInit.UserData),
		PhoneHome: old.CloudInit.PhoneHome,
	}
	if bp.CloudInit.PhoneHome != (PhoneHome{}) {
		e.CloudInit.PhoneHome = bp.CloudInit.PhoneHome
	}
	return &e
}

// mergePatch applies patch to target as an RFC 7386 JSON merge patch.
func mergePatch(target, patch map[string]any) map[string]any {
	if patch == nil {
		return target
	}
	if target == nil {
		target = map[string]any{}
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			tv, _ := target[k].(map[string]any)
			target[k] = mergePatch(cloneObject(tv), pv)
		default:
			target[k] = cloneValue(v)
		}
	}
	return target
}

func cloneValue(v any) any {
	m := cloneObject(map[string]any{"v": v})
	return m["v"]
}

// Delete removes the entries bp names and the kernel and initrd records it
// names (clearing the entries' references to them). Every deletion is
// attempted; a host or NID without an entry is reported (the first such
// error), a MAC or image without one is ignored.
func (s *Service) Delete(ctx context.Context, bp BootParams) error {
	s.store.wmu.Lock()
	defer s.store.wmu.Unlock()
	ch := newChange()
	var first error
	miss := func(k string) {
		if first == nil {
			first = problem.Invalidf("Key %s deletion: Key /params/%s does not exist", k, k)
		}
	}
	for _, h := range bp.Hosts {
		if _, ok := s.store.entry(h); ok {
			ch.del = append(ch.del, h)
		} else {
			miss(h)
		}
	}
	for _, m := range bp.MACs {
		if _, ok := s.store.entry(normMAC(m)); ok {
			ch.del = append(ch.del, normMAC(m))
		}
	}
	for _, n := range bp.NIDs {
		if _, ok := s.store.entry(nidKey(n)); ok {
			ch.del = append(ch.del, nidKey(n))
		} else {
			miss(nidKey(n))
		}
	}
	if first != nil {
		// hms-bss deleted every other key and then reported the first
		// missing one: a refused request here deletes nothing.
		return first
	}
	s.deleteImages(ch, &bp)
	return s.store.apply(ctx, ch)
}

// deleteImages adds to ch the removal of the images bp names and the
// clearing of every reference to them.
func (s *Service) deleteImages(ch *change, bp *BootParams) {
	kernel, initrd := "", ""
	if _, ok := s.store.image(kindKernel, bp.Kernel); ok {
		kernel = bp.Kernel
		ch.delImages = append(ch.delImages, imageKey{kindKernel, kernel})
	}
	if _, ok := s.store.image(kindInitrd, bp.Initrd); ok {
		initrd = bp.Initrd
		ch.delImages = append(ch.delImages, imageKey{kindInitrd, initrd})
	}
	if kernel == "" && initrd == "" {
		return
	}
	deleted := map[string]bool{}
	for _, k := range ch.del {
		deleted[k] = true
	}
	_, _, entries := s.store.all()
	for _, e := range entries {
		if deleted[e.Key] || (e.Kernel != kernel || kernel == "") && (e.Initrd != initrd || initrd == "") {
			continue
		}
		ne := *e.Entry
		if kernel != "" && ne.Kernel == kernel {
			ne.Kernel = ""
		}
		if initrd != "" && ne.Initrd == initrd {
			ne.Initrd = ""
		}
		ch.put[e.Key] = &ne
	}
}
