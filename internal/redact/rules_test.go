package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

const (
	alnumSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	hexSet   = "0123456789abcdef"
	upperSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	urlSet   = alnumSet + "_-"
	b64Set   = alnumSet + "+/"
)

// faker makes deterministic, format-valid fake secret bodies.
type faker struct{ r *rand.Rand }

func newFaker(seed uint64) *faker {
	return &faker{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// s returns n characters of set, with upper, lower and digit when the
// set has them (so that no sample looks like a placeholder).
func (f *faker) s(set string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[f.r.IntN(len(set))]
		}
		s := string(b)
		l, u, d, _ := charClasses(s)
		sl, su, sd, _ := charClasses(set)
		if (l || !sl) && (u || !su) && (d || !sd || n < 8) {
			return s
		}
	}
}

// ruleSamples returns, for each rule name, a text in which Redact must
// report that rule, and the secret that must disappear.
func ruleSamples() map[string][2]string {
	f := newFaker(7)
	s := func(text, secret string) [2]string { return [2]string{text, secret} }
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + f.s(b64Set, 70) + "\n" + f.s(b64Set, 70) + "\n-----END OPENSSH PRIVATE KEY-----"
	m := map[string][2]string{}
	add := func(name, text, secret string) { m[name] = s(text, secret) }
	add("private-key", "key:\n"+pem+"\n", pem[40:80])
	putty := f.s(b64Set, 64)
	add("putty-private-key", "Private-Lines: 1\n"+putty+"\nPrivate-MAC: "+f.s(hexSet, 64), putty)
	aws := f.s(b64Set, 40)
	add("aws-secret-key", "aws_secret_access_key = "+aws, aws)
	id := "AKIA" + f.s("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	add("aws-access-key-id", "id="+id, id)
	for name, prefix := range map[string]string{"github-pat": "ghp_", "github-oauth": "gho_", "github-app-token": "ghs_", "github-refresh-token": "ghr_"} {
		tok := prefix + f.s(alnumSet, 36)
		add(name, "using "+tok, tok)
	}
	tok := "glpat-" + f.s(urlSet, 20)
	add("gitlab-token", "PRIVATE-TOKEN: "+tok, tok)
	tok = "xoxb-" + f.s("0123456789", 12) + "-" + f.s(alnumSet, 24)
	add("slack-token", "token "+tok, tok)
	tok = "xapp-1-A" + f.s(upperSet, 10) + "-" + f.s("0123456789", 13) + "-" + f.s(hexSet, 64)
	add("slack-app-token", tok, tok)
	path := "T" + f.s(upperSet, 10) + "/B" + f.s(upperSet, 10) + "/" + f.s(alnumSet, 24)
	add("slack-webhook", "https://hooks.slack.com/services/"+path, path)
	path = f.s(hexSet, 8) + "-1111-2222-3333-" + f.s(hexSet, 12) + "@" + f.s(hexSet, 36) + "/IncomingWebhook/" + f.s(hexSet, 32)
	add("teams-webhook", "https://acme.webhook.office.com/webhookb2/"+path, path)
	tok = f.s(urlSet, 68)
	add("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/"+tok, tok)
	tok = "MT" + f.s(alnumSet, 24) + "." + f.s(urlSet, 6) + "." + f.s(urlSet, 38)
	add("discord-bot-token", "import discord\nbot.run('"+tok+"')", tok)
	tok = "1234567890:AA" + f.s(urlSet, 33)
	add("telegram-bot-token", "https://api.telegram.org/bot"+tok+"/getMe", tok)
	tok = "sk_live_" + f.s(alnumSet, 24)
	add("stripe-key", tok, tok)
	tok = "whsec_" + f.s(alnumSet, 32)
	add("stripe-webhook-secret", "wh "+tok, tok)
	tok = "sq0csp-" + f.s(urlSet, 43)
	add("square-token", tok, tok)
	tok = "shpat_" + f.s(hexSet, 32)
	add("shopify-token", tok, tok)
	tok = "SK" + f.s(hexSet, 32)
	add("twilio-api-key", "sid "+tok, tok)
	tok = "SG." + f.s(urlSet, 22) + "." + f.s(urlSet, 43)
	add("sendgrid-api-key", tok, tok)
	tok = "key-" + f.s(hexSet, 32)
	add("mailgun-api-key", "api:"+tok, tok)
	tok = f.s(hexSet, 32) + "-us6"
	add("mailchimp-api-key", "apikey "+tok, tok)
	tok = "npm_" + f.s(alnumSet, 36)
	add("npm-token", tok, tok)
	tok = "pypi-AgEIcHlwaS5vcmc" + f.s(urlSet, 80)
	add("pypi-token", tok, tok)
	tok = "dckr_pat_" + f.s(urlSet, 27)
	add("dockerhub-token", tok, tok)
	tok = "HRKU-AA" + f.s(urlSet, 58)
	add("heroku-api-key", tok, tok)
	tok = "dop_v1_" + f.s(hexSet, 64)
	add("digitalocean-token", tok, tok)
	tok = "hvs." + f.s(urlSet, 90)
	add("vault-token", tok, tok)
	tok = f.s("abcdefghijklmnopqrstuvwxyz0123456789", 14) + ".atlasv1." + f.s(urlSet, 67)
	add("terraform-cloud-token", tok, tok)
	tok = "dapi" + f.s(hexSet, 32)
	add("databricks-token", tok, tok)
	tok = "PMAK-" + f.s(hexSet, 24) + "-" + f.s(hexSet, 34)
	add("postman-api-key", tok, tok)
	tok = "lin_api_" + f.s(alnumSet, 40)
	add("linear-api-key", tok, tok)
	tok = "glsa_" + f.s(alnumSet, 32) + "_" + f.s(hexSet, 8)
	add("grafana-token", tok, tok)
	tok = "NRAK-" + f.s(upperSet, 27)
	add("newrelic-key", tok, tok)
	tok = "sntryu_" + f.s(hexSet, 64)
	add("sentry-token", tok, tok)
	tok = "pscale_tkn_" + f.s(urlSet, 43)
	add("planetscale-token", tok, tok)
	tok = "pul-" + f.s(hexSet, 40)
	add("pulumi-token", tok, tok)
	tok = "sbp_" + f.s(hexSet, 40)
	add("supabase-token", tok, tok)
	tok = "dp.st.prd." + f.s(alnumSet, 43)
	add("doppler-token", tok, tok)
	tok = "dt0c01." + f.s(upperSet, 24) + "." + f.s(upperSet, 64)
	add("dynatrace-token", tok, tok)
	tok = "fo1_" + f.s(urlSet, 43)
	add("fly-token", tok, tok)
	tok = "ATATT3xFfGF0" + f.s(urlSet, 170)
	add("atlassian-api-token", tok, tok)
	tok = "ATBB" + f.s(alnumSet, 32)
	add("bitbucket-app-password", tok, tok)
	tok = "pat" + f.s(alnumSet, 14) + "." + f.s(hexSet, 64)
	add("airtable-token", tok, tok)
	tok = "ntn_" + f.s("0123456789", 11) + f.s(alnumSet, 35)
	add("notion-token", tok, tok)
	tok = "v1.0-" + f.s(hexSet, 24) + "-" + f.s(hexSet, 146)
	add("cloudflare-origin-ca-key", tok, tok)
	tok = f.s(alnumSet, 76) + "AZDO" + f.s(alnumSet, 4)
	add("azure-devops-pat", tok, tok)
	tok = "sk-ant-api03-" + f.s(urlSet, 93) + "AA"
	add("anthropic-api-key", tok, tok)
	tok = "sk-proj-" + f.s(urlSet, 100)
	add("openai-api-key", tok, tok)
	tok = "sk-" + f.s(hexSet, 32)
	add("sk-api-key", tok, tok)
	tok = "hf_" + f.s("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34)
	add("huggingface-token", tok, tok)
	tok = "gsk_" + f.s(alnumSet, 52)
	add("groq-api-key", tok, tok)
	tok = "r8_" + f.s(alnumSet, 37)
	add("replicate-token", tok, tok)
	tok = "pplx-" + f.s(alnumSet, 48)
	add("perplexity-api-key", tok, tok)
	tok = "xai-" + f.s(alnumSet, 80)
	add("xai-api-key", tok, tok)
	tok = "AIza" + f.s(urlSet, 35)
	add("google-api-key", tok, tok)
	tok = "GOCSPX-" + f.s(urlSet, 28)
	add("google-oauth-client-secret", tok, tok)
	tok = "ya29.a0" + f.s(urlSet, 100)
	add("google-oauth-token", tok, tok)
	tok = "1//0" + f.s(urlSet, 60)
	add("google-refresh-token", tok, tok)
	tok = "AAAA" + f.s(urlSet, 7) + ":APA91b" + f.s(urlSet, 134)
	add("firebase-fcm-key", tok, tok)
	tok = f.s(b64Set, 86) + "=="
	add("azure-storage-key", "AccountName=x;AccountKey="+tok+";EndpointSuffix=core.windows.net", tok)
	tok = f.s(b64Set, 43) + "="
	add("azure-shared-access-key", "Endpoint=sb://x/;SharedAccessKeyName=Root;SharedAccessKey="+tok, tok)
	tok = f.s(alnumSet, 43) + "%3D"
	add("azure-sas-signature", "https://a.blob.core.windows.net/c?sv=2022-11-02&sig="+tok, tok)
	tok = "abc8Q~" + f.s(alnumSet+"_~.-", 34)
	add("azure-client-secret", "secret: "+tok, tok)
	tok = "LTAI" + f.s(alnumSet, 20)
	add("alibaba-access-key-id", tok, tok)
	tok = "AKID" + f.s(alnumSet, 32)
	add("tencent-secret-id", tok, tok)
	tok = "AGE-SECRET-KEY-1" + f.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
	add("age-secret-key", tok, tok)
	tok = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0." + f.s(urlSet, 43)
	add("jwt", tok, tok)
	add("url-password", "amqp://user:Hunter2Hunter2@rabbit:5672", "Hunter2Hunter2")
	add("basic-auth", "Authorization: Basic dXNlcjpIdW50ZXIySHVudGVyMg==", "dXNlcjpIdW50ZXIySHVudGVyMg==")
	tok = f.s(urlSet, 40)
	add("bearer-token", "Authorization: Bearer "+tok, tok)
	tok = f.s(alnumSet, 32)
	add("authorization", "Authorization: Token "+tok, tok)
	add("password", "PGPASSWORD=Hunter2x psql", "Hunter2x")
	tok = f.s(alnumSet, 32)
	add("api-key", "X-Api-Key: "+tok, tok)
	tok = f.s(alnumSet, 32)
	add("secret-key", "SIGNING_KEY="+tok, tok)
	tok = f.s(alnumSet, 32)
	add("secret", "client_secret: "+tok, tok)
	tok = f.s(alnumSet, 32)
	add("token", "access_token="+tok, tok)
	tok = f.s(alnumSet, 32)
	add("credential", "CREDENTIALS="+tok, tok)
	tok = f.s(alnumSet, 32)
	add("session-id", "Cookie: sessionid="+tok+"; theme=dark", tok)
	tok = f.s(alnumSet, 32)
	add("auth", `{"auth": "`+tok+`"}`, tok)
	return m
}

// Every rule catches a sample of its format, and every rule has one.
func TestEveryRuleCatchesItsFormat(t *testing.T) {
	t.Parallel()
	samples := ruleSamples()
	for _, name := range Rules() {
		sm, ok := samples[name]
		if !ok {
			t.Errorf("rule %s has no sample", name)
			continue
		}
		out, rep := Redact(sm[0])
		if strings.Contains(out, sm[1]) {
			t.Errorf("%s: secret survived in %q", name, out)
		}
		if rep.ByRule()[name] == 0 {
			t.Errorf("%s: reported %+v for %q", name, rep.Findings, sm[0])
		}
		if again, _ := Redact(out); again != out {
			t.Errorf("%s: not idempotent: %q -> %q", name, out, again)
		}
	}
}

// A provider token whose body is a placeholder run is left alone.
func TestPlaceholderBodiesSurvive(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"sk_live_XXXXXXXXXXXXXXXXXXXXXXXX",
		"AKIAXXXXXXXXXXXXXXXX",
		"npm_000000000000000000000000000000000000",
		"Authorization: Bearer <token>",
		"password: ********",
		"api_key=${API_KEY}",
		"token: {{ .Values.token }}",
		"secret = os.Getenv(\"SECRET\")",
		"DATABASE_URL=postgres://user:${DB_PASSWORD}@db/app",
		"password=changeme",
	} {
		if out, rep := Redact(in); out != in {
			t.Errorf("Redact(%q) = %q (%+v)", in, out, rep.Findings)
		}
	}
}
