package redact

import (
	"regexp"
	"strings"
)

// kw is shorthand for a keyword list.
func kw(k ...string) []string { return k }

// buildRules returns every rule in priority order: key blocks first,
// then provider formats (most specific first), then credentials in URLs,
// headers and command lines, then the generic assignment rules. The
// expressions are written from the providers' published token formats.
func buildRules() []*rule {
	awsID := re("aws-access-key-id", kw("akia", "asia", "abia", "acca", "a3t"),
		`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`, alnum, randomLooking)
	rules := []*rule{
		{name: "private-key", keywords: kw("-----begin "), custom: findPrivateKeys, wholeText: true},
		wholeText(re("putty-private-key", kw("private-lines:"), `Private-Lines: *[0-9]+\r?\n(?P<s>(?:[A-Za-z0-9+/=]+(?:\r?\n|$))+)`, nil, nil)),

		// AWS: the secret access key after its key name, then ids, then a
		// bare secret next to an id.
		withLeft(re("aws-secret-key", kw("secret"),
			`(?i)(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key|aws[_.-]?secret)["'`+"`"+`]?(?:[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)["'`+"`"+`]?(?P<s>[A-Za-z0-9/+]{40})`,
			b64Chars, awsSecretLike), b64Body),
		awsID,
		{name: "aws-secret-key", keywords: awsID.keywords, custom: findAWSSecretNearID(awsID), back: 320, fwd: 320, multiLine: true},

		// GitHub, GitLab.
		re("github-pat", kw("ghp_"), `ghp_[A-Za-z0-9]{36,}`, word, mixedAfter(4)),
		re("github-pat", kw("github_pat_"), `github_pat_[A-Za-z0-9_]{30,}`, word, mixedAfter(11)),
		re("github-oauth", kw("gho_"), `gho_[A-Za-z0-9]{36,}`, word, mixedAfter(4)),
		re("github-app-token", kw("ghu_", "ghs_"), `gh[us]_[A-Za-z0-9]{36,}`, word, mixedAfter(4)),
		re("github-refresh-token", kw("ghr_"), `ghr_[A-Za-z0-9]{36,}`, word, mixedAfter(4)),
		re("gitlab-token", kw("glpat-", "gldt-", "glrt-", "glrtr-", "glptt-", "glcbt-", "glsoat-", "glft-", "glimt-", "glagent-", "gloas-", "gr1348941"),
			`(?:glpat|gldt|glrtr?|glptt|glcbt|glsoat|glft|glimt|glagent|gloas)-[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20,64}`, wordDash, mixedAfter(5)),

		// Chat and messaging.
		re("slack-token", kw("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe"),
			`xox(?:[abposr]|e(?:\.xox[bp])?)-[A-Za-z0-9-]{10,}`, wordDash, mixedAfter(5)),
		re("slack-app-token", kw("xapp-"), `xapp-[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{20,}`, wordDash, nil),
		re("slack-webhook", kw("hooks.slack.com"), `hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})`, nil, nil),
		re("teams-webhook", kw("webhook.office.com"), `\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/_-]{40,})`, nil, nil),
		re("discord-webhook", kw("/api/webhooks/"), `discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/(?P<s>[A-Za-z0-9_-]{40,100})`, wordDash, nil),
		near(re("discord-bot-token", kw("discord"), `[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`, wordDash, mixedToken), 8192),
		withLeft(re("telegram-bot-token", kw(":aa"), `[0-9]{8,10}:AA[A-Za-z0-9_-]{33}`, wordDash, mixedAfter(12)), digits),

		// Payments and commerce.
		re("stripe-key", kw("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
			`[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}`, word, mixedAfter(8)),
		re("stripe-webhook-secret", kw("whsec_"), `whsec_[A-Za-z0-9+/=]{24,}`, word, mixedAfter(6)),
		re("square-token", kw("sq0atp-", "sq0csp-", "eaaa"), `sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}|EAAA[A-Za-z0-9_-]{60,80}`, wordDash, mixedAfter(4)),
		re("shopify-token", kw("shpat_", "shpca_", "shppa_", "shpss_"), `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, word, nil),

		// Email, SMS.
		re("twilio-api-key", kw("sk"), `SK[0-9a-fA-F]{32}`, alnum, hexMixed(2)),
		re("sendgrid-api-key", kw("sg."), `SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{40,50}`, wordDash, mixedAfter(3)),
		re("mailgun-api-key", kw("key-"), `key-[0-9a-f]{32}`, alnum, hexMixed(4)),
		re("mailchimp-api-key", kw("-us"), `[0-9a-f]{32}-us[0-9]{1,2}`, alnum, hexMixed(0)),

		// Package registries and developer platforms.
		re("npm-token", kw("npm_"), `npm_[A-Za-z0-9]{36}`, word, mixedAfter(4)),
		re("pypi-token", kw("pypi-age"), `pypi-AgE[A-Za-z0-9_-]{50,}`, wordDash, nil),
		re("dockerhub-token", kw("dckr_pat_", "dckr_oat_"), `dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,64}`, wordDash, mixedAfter(9)),
		re("heroku-api-key", kw("hrku-"), `HRKU-[A-Za-z0-9_-]{58,70}`, wordDash, mixedAfter(5)),
		re("digitalocean-token", kw("dop_v1_", "doo_v1_", "dor_v1_"), `do[opr]_v1_[a-f0-9]{64}`, word, nil),
		re("vault-token", kw("hvs.", "hvb.", "hvr."), `hv[sbr]\.[A-Za-z0-9_-]{24,}`, wordDash, mixedAfter(4)),
		re("terraform-cloud-token", kw(".atlasv1."), `[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}`, wordDash, nil),
		re("databricks-token", kw("dapi"), `dapi[a-f0-9]{32}(?:-[0-9]+)?`, alnum, hexMixed(4)),
		re("postman-api-key", kw("pmak-"), `PMAK-[a-f0-9]{24}-[a-f0-9]{34}`, alnum, nil),
		re("linear-api-key", kw("lin_api_", "lin_oauth_"), `lin_(?:api_[A-Za-z0-9]{40}|oauth_[a-f0-9]{64})`, word, nil),
		re("grafana-token", kw("glsa_", "glc_"), `glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}`, word, mixedAfter(4)),
		re("newrelic-key", kw("nrak-", "nrii-", "nrjs-"), `NR(?:AK|II|JS)-[A-Z0-9]{27}`, alnum, nil),
		re("sentry-token", kw("sntrys_", "sntryu_"), `sntry[su]_[A-Za-z0-9_=+/.-]{40,}`, wordDash, mixedAfter(7)),
		re("planetscale-token", kw("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), `pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}`, wordDash, nil),
		re("pulumi-token", kw("pul-"), `pul-[a-f0-9]{40}`, alnum, nil),
		re("supabase-token", kw("sbp_", "sb_secret_"), `sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,64}`, word, nil),
		re("doppler-token", kw("dp.st.", "dp.pt.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
			`dp\.(?:st|pt|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}`, wordDot, nil),
		re("dynatrace-token", kw("dt0c01."), `dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`, alnum, nil),
		re("fly-token", kw("fo1_", "fm1r_", "fm1a_", "fm2_"), `fo1_[A-Za-z0-9_-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3}`, wordDash, nil),
		re("atlassian-api-token", kw("atatt3", "atctt3"), `AT[AC]TT3[A-Za-z0-9_=-]{100,}`, wordDash, nil),
		re("bitbucket-app-password", kw("atbb"), `ATBB[A-Za-z0-9_=.-]{32,}`, wordDash, mixedAfter(4)),
		re("airtable-token", kw("pat"), `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`, alnum, nil),
		re("notion-token", kw("ntn_", "secret_"), `ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}`, word, mixedAfter(4)),
		re("cloudflare-origin-ca-key", kw("v1.0-"), `v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`, alnum, nil),
		re("azure-devops-pat", kw("azdo"), `[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}`, alnum, nil),

		// AI providers.
		re("anthropic-api-key", kw("sk-ant-"), `sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,}`, wordDash, mixedAfter(7)),
		re("openai-api-key", kw("sk-"), `sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}`, wordDash, mixedAfter(3)),
		re("sk-api-key", kw("sk-"), `sk-[A-Za-z0-9]{32,}`, wordDash, mixedAfter(3)),
		re("huggingface-token", kw("hf_", "api_org_"), `hf_[A-Za-z0-9]{34,40}|api_org_[A-Za-z0-9]{34}`, word, mixedAfter(3)),
		re("groq-api-key", kw("gsk_"), `gsk_[A-Za-z0-9]{52}`, word, mixedAfter(4)),
		re("replicate-token", kw("r8_"), `r8_[A-Za-z0-9]{37}`, word, mixedAfter(3)),
		re("perplexity-api-key", kw("pplx-"), `pplx-[A-Za-z0-9]{48}`, wordDash, mixedAfter(5)),
		re("xai-api-key", kw("xai-"), `xai-[A-Za-z0-9]{80}`, wordDash, mixedAfter(4)),

		// Google, Firebase.
		re("google-api-key", kw("aiza"), `AIza[A-Za-z0-9_-]{35}`, wordDash, mixedAfter(4)),
		re("google-oauth-client-secret", kw("gocspx-"), `GOCSPX-[A-Za-z0-9_-]{28}`, wordDash, mixedAfter(7)),
		re("google-oauth-token", kw("ya29."), `ya29\.[A-Za-z0-9_-]{20,}`, wordDash, mixedAfter(5)),
		re("google-refresh-token", kw("1//0"), `1//0[A-Za-z0-9_-]{40,}`, wordDash, mixedAfter(4)),
		re("firebase-fcm-key", kw("apa91b"), `AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}`, wordDash, nil),

		// Azure.
		re("azure-storage-key", kw("accountkey="), `(?i)AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)`, nil, nil),
		withLeft(re("azure-shared-access-key", kw("sharedaccesskey="), `(?i)SharedAccessKey=(?P<s>[A-Za-z0-9+/]{42,86}={0,2})`, b64Chars, nil), b64Body),
		re("azure-sas-signature", kw("sig="), `[?&]sig=(?P<s>[A-Za-z0-9%+/=]{30,})`, nil, nil),
		re("azure-client-secret", kw("q~"), `[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`, azureChar, mixedToken),

		// Asian clouds.
		re("alibaba-access-key-id", kw("ltai"), `LTAI[A-Za-z0-9]{12,24}`, alnum, mixedAfter(4)),
		re("tencent-secret-id", kw("akid"), `AKID[A-Za-z0-9]{32}`, alnum, mixedAfter(4)),

		// Other formats.
		re("age-secret-key", kw("age-secret-key-1"), `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`, alnum, nil),
		re("jwt", kw("eyj"), `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`, wordDash, nil),

		// Credentials in URLs, headers and commands.
		{name: "url-password", keywords: kw("://"), onHits: findURLPasswords},
		// Go's MySQL driver DSN has no scheme: user:password@tcp(host)/db.
		re("url-password", kw("@tcp(", "@unix(", "@udp("), `[A-Za-z0-9_.-]+:(?P<s>[^\s@:/"'`+"`"+`]+)@(?:tcp|unix|udp)\(`, nil, func(v string) bool { return !isTemplate(v) }),
		re("basic-auth", kw("basic"), `(?i)\bbasic[ \t]+(?P<s>[A-Za-z0-9+/]{6,}={0,2})`, b64Chars, basicCredential),
		re("bearer-token", kw("bearer"), `(?i)\bbearer[ \t]+(?P<s>[A-Za-z0-9._~+/=-]{16,})`, wordDot, bearerValue),
		re("authorization", kw("authorization"),
			`(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:token|bot|apikey|api-key|api-token|key|sso-key|ssws|splunk|hmac)[ \t]+(?P<s>[^\s"',;]{8,})`,
			nil, notPlaceholder),
		re("password", kw("mysql", "mariadb"),
			`(?i:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)(?:\.exe)?[ \t][^\r\n|;&]*?[ \t]-p(?:'(?P<sq>[^'\r\n]+)'|"(?P<dq>[^"\r\n]+)"|(?P<bare>[^\s'"]+))`,
			nil, nil),
		re("password", kw("sshpass", "login", "redis-cli", "mongo", "ldap"),
			`(?:sshpass[ \t]+-p|docker[ \t]+login\b[^\r\n|;&]*?[ \t](?:-p|--password)|redis-cli\b[^\r\n|;&]*?[ \t](?:-a|--pass)|mongo(?:sh)?\b[^\r\n|;&]*?[ \t]-p|ldap[a-z]+\b[^\r\n|;&]*?[ \t]-w)(?:[ \t]+|=)?(?:'(?P<sq>[^'\r\n]+)'|"(?P<dq>[^"\r\n]+)"|(?P<bare>[^\s'"-][^\s'"]*))`,
			nil, nil),
		re("password", kw("curl", "wget"),
			`(?:curl|wget)\b[^\r\n|;&]*?[ \t](?:-u|--user)(?:[ \t]+|=)["']?[^\s:"'\[]*:(?P<s>[^\s"']+)`,
			nil, notPlaceholder),
	}
	// The command rules pick whichever value group matched.
	for _, r := range rules {
		if r.name == "password" && r.re != nil && r.re.SubexpIndex("bare") >= 0 {
			r.custom = commandFinder(r.re)
		}
	}
	return append(rules, genericRules()...)
}

// commandFinder reports the quoted or bare password of a command line.
func commandFinder(x *regexp.Regexp) func(string, int, int, func(int, int, string)) {
	gs := []int{x.SubexpIndex("sq"), x.SubexpIndex("dq"), x.SubexpIndex("bare")}
	return func(text string, lo, hi int, emit func(int, int, string)) {
		for _, m := range x.FindAllStringSubmatchIndex(text[lo:hi], -1) {
			for _, g := range gs {
				if m[2*g] >= 0 && !isPlaceholder(text[lo+m[2*g]:lo+m[2*g+1]]) {
					emit(lo+m[2*g], lo+m[2*g+1], "")
				}
			}
		}
	}
}

// near makes a rule look up to n bytes around its keyword, across
// lines (import discord … client.run("…")).
func near(r *rule, n int) *rule {
	r.back, r.fwd, r.multiLine = n, n, true
	return r
}

// wholeText marks a rule that runs on all the text (its expression
// starts with a literal, which the regexp package finds quickly).
func wholeText(r *rule) *rule {
	r.wholeText = true
	return r
}

// mixedAfter checks a prefixed token: the body after its n-byte prefix
// must not be a placeholder run.
func mixedAfter(n int) func(string) bool {
	return func(s string) bool { return len(s) > n && randomLooking(s[n:]) }
}

// hexMixed checks a hex body after an n-byte prefix: letters and digits
// both present (so not a word and not a number).
func hexMixed(n int) func(string) bool {
	return func(s string) bool {
		if len(s) <= n {
			return false
		}
		l, u, d, _ := charClasses(s[n:])
		return (l || u) && d && randomLooking(s[n:])
	}
}

func notPlaceholder(s string) bool { return !isPlaceholder(s) }

// withLeft sets a rule's left boundary class (a Telegram bot token may
// follow "bot" in a URL, but not another digit).
func withLeft(r *rule, left *byteSet) *rule {
	r.leftChars = left
	return r
}

// authorityStop ends the authority (user:password@host:port) of a URL.
var authorityStop = newByteSet("/?#\"'<> \t\r\n\v\f\\`")

// findURLPasswords reports the password of scheme://user:password@host
// for any scheme: any value but a syntactic placeholder (even "pass" is
// a password there). The user and host stay. The last "@" before the
// host ends the password, so a raw "@" inside it is covered too.
func findURLPasswords(text string, hits []int32, emit func(int, int, string)) {
	done := 0
	for _, h := range hits {
		p := int(h) // just past "://"
		if p < done || p < 4 || !(isLetter(text[p-4]) || '0' <= text[p-4] && text[p-4] <= '9' || strings.IndexByte("+.-", text[p-4]) >= 0) {
			continue
		}
		j := p
		for j < len(text) && j-p < 1024 && !authorityStop[text[j]] {
			j++
		}
		if j < len(text) && text[j] == '#' && strings.IndexByte(text[p:j], '@') < 0 && strings.IndexByte(text[p:j], ':') >= 0 {
			// An unencoded "#" in a password (user:pa#ss@host) is not
			// a fragment when an "@" follows before any "/" or space.
			k := j
			for k < len(text) && k-j < 256 && text[k] != '@' && (text[k] == '#' || !authorityStop[text[k]]) {
				k++
			}
			if k < len(text) && text[k] == '@' {
				for j = k; j < len(text) && j-p < 1024 && !authorityStop[text[j]]; j++ {
				}
			}
		}
		done = j
		auth := text[p:j]
		at := strings.LastIndexByte(auth, '@')
		if at < 0 || at+1 >= len(auth) || !(isLetter(auth[at+1]) || '0' <= auth[at+1] && auth[at+1] <= '9' || auth[at+1] == '[') {
			continue
		}
		colon := strings.IndexByte(auth[:at], ':')
		if colon < 0 || colon+1 == at || strings.Contains(auth[:at], MarkerPrefix) {
			continue
		}
		if pw := auth[colon+1 : at]; !isTemplate(pw) {
			emit(p+colon+1, p+at, "")
		}
	}
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// bearerValue vets a bearer token: generated-looking, not a placeholder.
func bearerValue(s string) bool { return !isPlaceholder(s) && mixedToken(s) }
