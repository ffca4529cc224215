package orchestrator

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

var arches = []string{"X86", "ARM", "Other", "Unknown"}

// nidLike is what BOS takes for a NID in a node list or limit.
var nidLike = regexp.MustCompile(`^(?i)(nid)?[0-9]+$`)

// checkTemplate checks what can be known without asking a peer: names,
// boot sets and their node fields, and NIDs when reject_nids is on.
func checkTemplate(t *Template, rejectNIDs bool) error {
	if !namePattern.MatchString(t.Name) {
		return problem.Invalidf("Session Template name %q: letters, digits, '.', '-' and '_' only, 1-127 characters, beginning and ending with a letter or digit", t.Name)
	}
	if len(t.Description) > 1023 {
		return problem.Invalidf("description: at most 1023 characters")
	}
	if len(t.BootSets) == 0 || len(t.BootSets) > 127 {
		return problem.Invalidf("Session template '%s' requires between 1 and 127 boot sets", t.Name)
	}
	for name, bs := range t.BootSets {
		if err := checkBootSet(name, bs, rejectNIDs); err != nil {
			return problem.Invalidf("Session template '%s': %v", t.Name, err)
		}
	}
	return nil
}

func checkBootSet(name string, bs BootSet, rejectNIDs bool) error {
	switch {
	case !namePattern.MatchString(name):
		return fmt.Errorf("boot set name %q: letters, digits, '.', '-' and '_' only, beginning and ending with a letter or digit", name)
	case bs.Name != "" && bs.Name != name:
		return fmt.Errorf("boot set '%s': name field '%s' does not match its key", name, bs.Name)
	case bs.Path == "" || bs.Type == "":
		return fmt.Errorf("boot set '%s': path and type are required", name)
	case len(bs.NodeList) == 0 && len(bs.NodeGroups) == 0 && len(bs.NodeRolesGroups) == 0:
		return fmt.Errorf("boot set '%s' has no node_list, node_roles_groups, or node_groups", name)
	case bs.Arch != "" && !slices.Contains(arches, bs.Arch):
		return fmt.Errorf("boot set '%s': arch %q is not one of %s", name, bs.Arch, strings.Join(arches, ", "))
	}
	for _, n := range bs.NodeList {
		if rejectNIDs && nidLike.MatchString(n) {
			return fmt.Errorf("boot set '%s': node_list entry %q looks like a NID (reject_nids is set)", name, n)
		}
		if n == "" || len(n) > 127 {
			return fmt.Errorf("boot set '%s': node_list entries are 1-127 characters", name)
		}
	}
	return nil
}

// templateLinks are a template's links.
func templateLinks(name string) []Link {
	return []Link{{Href: "/v2/sessiontemplates/" + name, Rel: "self"}}
}

// PutTemplate creates or replaces a template from its JSON body.
// A tenant's template is the tenant's own ("": no tenant's).
func (s *Service) PutTemplate(ctx context.Context, tenant, name string, body []byte) (Template, error) {
	var t Template
	if err := decodeStrict(body, &t); err != nil {
		return Template{}, err
	}
	return s.storeTemplate(ctx, tenant, name, t)
}

// PatchTemplate merges body into a stored template.
func (s *Service) PatchTemplate(ctx context.Context, tenant, name string, body []byte) (Template, error) {
	cur, err := s.store.Template(ctx, tenant, name)
	if err != nil {
		return Template{}, err
	}
	var patch map[string]any
	if err := decodeStrict(body, &patch); err != nil {
		return Template{}, err
	}
	for _, k := range []string{"name", "tenant", "links"} {
		if _, ok := patch[k]; ok {
			return Template{}, problem.Invalidf("%s: cannot be patched", k)
		}
	}
	var next Template
	if err := mergePatch(cur, body, &next); err != nil {
		return Template{}, err
	}
	return s.storeTemplate(ctx, tenant, name, next)
}

func (s *Service) storeTemplate(ctx context.Context, tenant, name string, t Template) (Template, error) {
	t.Name, t.Tenant, t.Links = name, tenant, templateLinks(name)
	if err := checkTemplate(&t, s.options().RejectNIDs); err != nil {
		return Template{}, err
	}
	if _, err := s.tenantNodes(ctx, tenant); err != nil {
		return Template{}, err
	}
	if err := s.store.PutTemplate(ctx, t); err != nil {
		return Template{}, err
	}
	return t, nil
}

// Template returns one template of a tenant (ErrNotFound).
func (s *Service) Template(ctx context.Context, tenant, name string) (Template, error) {
	return s.store.Template(ctx, tenant, name)
}

// Templates lists a tenant's templates; every template for no tenant.
func (s *Service) Templates(ctx context.Context, tenant string) ([]Template, error) {
	return s.store.Templates(ctx, tenant)
}

// DeleteTemplate removes a template of a tenant (ErrNotFound).
func (s *Service) DeleteTemplate(ctx context.Context, tenant, name string) error {
	return s.store.DeleteTemplate(ctx, tenant, name)
}

// ValidateTemplate answers GET /v2/sessiontemplatesvalid: "Valid", or what
// is wrong with the template, its nodes (as HSM knows them) or its image
// manifests. Only a missing template is an error (ErrNotFound).
func (s *Service) ValidateTemplate(ctx context.Context, tenant, name string) (string, error) {
	t, err := s.store.Template(ctx, tenant, name)
	if err != nil {
		return "", err
	}
	if err := checkTemplate(&t, s.options().RejectNIDs); err != nil {
		return err.Error(), nil
	}
	if _, err := s.resolveTemplate(ctx, t, OpBoot); err != nil {
		return err.Error(), nil
	}
	return "Valid", nil
}

// ExampleTemplate is GET /v2/sessiontemplatetemplate: a skeleton to start from.
func ExampleTemplate() Template {
	on := true
	return Template{Name: "name-your-template", EnableCFS: &on, CFS: &CFS{Configuration: "desired-cfs-config"},
		BootSets: map[string]BootSet{"name_your_boot_set": {
			Type: "s3", Etag: "boot-image-s3-etag", Path: "s3://boot-images/boot-image-ims-id/manifest.json",
			KernelParameters: "console=ttyS0,115200 bad_page=panic crashkernel=340M hugepagelist=2m-2g intel_iommu=off intel_pstate=disable iommu=pt ip=dhcp numa_interleave_omit=headless numa_zonelist_order=node oops=panic pageblock_order=14 rd.neednet=1 rd.retry=10 rd.shell systemd.unified_cgroup_hierarchy=1 split_lock_detect=off",
			NodeList:         []string{"xname1", "xname2", "xname3"}, Arch: "X86", CFS: &CFS{Configuration: "desired-cfs-config"},
			RootfsProvider:            "sbps",
			RootfsProviderPassthrough: "sbps:v1:iqn.2023-06.csm.iscsi:_sbps-hsn._tcp.my-system.my-site-domain:300"}}}
}
