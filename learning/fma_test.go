package learning_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The 0.7-boundary scores are exact only if no multiply and add are fused.
// CI runs on amd64, which never fuses, so this test compiles the package
// for the architectures whose Go compiler does (arm64, ppc64le, s390x,
// riscv64) and checks the assembly of the scoring functions for fused
// multiply-add instructions.
func TestScoringHasNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for four architectures")
	}
	t.Parallel()
	fused := regexp.MustCompile(`\b(FN?M(ADD|SUB)[SD]?|FMA[SD]?|FN?MADD|FN?MSUB|WFMADB|FMADD|FMSUB)\b`)
	scoring := regexp.MustCompile(`learning\.(RawScore|Config\.ScoreOutcome)\b.*STEXT`)
	for _, arch := range []string{"arm64", "ppc64le", "s390x", "riscv64"} {
		cmd := exec.Command("go", "build", "-o", "/dev/null", "-gcflags=-S", ".")
		cmd.Env = append(cmd.Environ(), "GOARCH="+arch, "GOOS=linux", "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: go build: %v\n%s", arch, err, out)
		}
		in, seen := false, 0
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "STEXT") {
				in = scoring.MatchString(line)
				if in {
					seen++
				}
				continue
			}
			if in && fused.MatchString(line) {
				t.Errorf("%s: fused multiply-add in the scoring code: %s", arch, strings.TrimSpace(line))
			}
		}
		if seen < 2 {
			t.Errorf("%s: found %d scoring functions in the assembly, want RawScore and ScoreOutcome", arch, seen)
		}
	}
}
