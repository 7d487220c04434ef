package tokenize

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The bilingual lexicon maps English words and Chinese terms of software
// work to shared concepts, so that the offline embedder gives an English
// lesson and its Chinese paraphrase common features ("timeout" and "超时"
// both carry the concept "timeout"), and English synonyms meet ("slow",
// "latency" and "性能" all carry "perf"). It is a general vocabulary of
// coding, operations and review work, written from the domain, not from
// an evaluation set. An English entry is a word as Words yields it before
// stemming; it matches by its stem. A Chinese entry matches anywhere in a
// CJK run.
//
// Each line is "concept: english words | chinese terms".
const lexiconSource = `
retry: retry retries retrying again | 重试 重新尝试 再试
generate: generate generated generator generators codegen regenerate template templates produce produced produces | 生成 代码生成 自动生成 模板
idempotent: idempotent idempotency idempotence duplicate twice | 幂等 重复 两次 多次 重复提交 重复执行 两遍 重复发送
timeout: timeout timeouts timed deadline hang hangs hanging forever stuck block blocks blocked blocking | 超时 卡住 卡死 无限等待 一直等待 挂起
cancel: cancel cancelled canceled cancellation abort | 取消 中止
context: context ctx | 上下文
goroutine: goroutine goroutines coroutine thread threads concurrent concurrency parallel race simultaneous simultaneously | 协程 线程 并发 并行 竞态 竞争 同时
leak: leak leaks leaking leaked grows growing | 泄漏 泄露 上涨 增长 不断增加
memory: memory heap oom ram | 内存 堆
mutex: mutex lock locks locking synchronize sync deadlock deadlocks | 锁 互斥 加锁 同步 死锁
map: map maps dict dictionary hashmap | 字典 映射
crash: crash crashes crashed panic fatal killed unwrap | 崩溃 挂掉 宕机 挂了
error: error errors exception exceptions failure | 错误 异常 报错 出错
catch: catch swallow swallowed silently ignore ignored except quiet quietly | 捕获 吞掉 吞了 忽略
fail: fail fails failed failing broken break breaks | 失败 坏了 不可用 挂了
test: test tests testing unittest spec assert assertion expect expected expectation | 测试 单测 单元测试 断言 用例 预期
flaky: flaky intermittent intermittently sometimes randomly occasionally | 偶尔 偶发 不稳定 时好时坏 随机
sleep: sleep sleeps delay wait pause pauses paused | 睡眠 等待 延时 延迟 停顿
fake: fake mock mocks stub stubs sandbox recorded patch patched patching | 模拟 桩 假的 沙箱 打桩
external: external thirdparty third party provider upstream downstream remote public exposed | 外部 第三方 下游 上游 远程 远端 对外 公开 开放
api: api apis endpoint endpoints rest interface route | 接口 端点 路由
http: http https request requests response client handler handlers | 请求 响应 客户端
body: body bodies | 响应体 请求体
connection: connection connections socket sockets descriptor descriptors fd fds ulimit | 连接 套接字 句柄 文件描述符
close: close closed closing | 关闭
pool: pool worker workers exhaust exhausted | 线程池 连接池 耗尽 占满
database: database databases db sql postgres postgresql mysql sqlite | 数据库 线上库 生产库 主库 从库
query: query queries select statement statements | 查询 语句 SQL
inject: injection inject concatenate concatenation concatenating append appending interpolate | 注入 拼接 拼进
parameter: parameter parameters placeholder placeholders bound bind argument arguments args signature signatures | 参数 占位符 绑定
table: table tables row rows record records | 记录 大表 数据表 行数 数据行
column: column columns field fields | 字段
rename: rename renamed renaming | 改名 重命名 改字段
migration: migration migrations schema | 迁移 表结构
index: index indexes indices | 索引
delete: delete deleting deleted remove removing drop purge cleanup clean rm rid | 删除 删掉 清理 清除 移除
update: update updates updating modify modified change changed changing edit edited | 更新 修改 改动 改了 改完
where: where condition filter | 条件 过滤
transaction: transaction transactions rollback commit abort aborted aborting | 事务 回滚
backup: backup backups | 备份
production: production prod live | 生产 线上 生产环境
staging: staging preprod sandbox | 预发 预发布 测试环境
deploy: deploy deploys deployment rollout release releases ship launch | 部署 发布 上线 发版
version: version versions versioning major upgrade upgrading bump latest | 版本 升级 大版本 升到 最新
dependency: dependency dependencies library libraries package packages module npm pip | 依赖 依赖库 依赖包 第三方库 库代码
changelog: changelog breaking | 变更日志 不兼容
compatible: compatible compatibility backward backwards old | 兼容 向后兼容 旧版本 老版本
lockfile: lockfile lock yarn pnpm shrinkwrap | 锁文件
conflict: conflict conflicts | 冲突
merge: merge merging merged | 合并
rebase: rebase rebased rebasing | 变基
git: git branch branches | 分支 仓库
push: push pushed pushing force | 推送 推上去 强推 强制推送
history: history rewrite rewriting squash squashed squashing fixup | 历史 改写 压缩提交 整理提交
commit: commit commits | 提交 提交信息
team: team teammate teammates colleague colleagues | 团队 同事 别人
docker: docker dockerfile container containers image images | 镜像 容器
build: build builds building compile compiles compiling | 构建 编译
cache: cache caches caching cached redis memcached memcache | 缓存
expire: expire expiry expiration ttl stale invalidate invalidation outdated | 过期 失效 旧值 旧数据 陈旧
serialize: serialize serialization deserialize format encoding marshal unmarshal | 序列化 反序列化 格式
kubernetes: kubernetes k8s pod pods deployment | 容器编排
probe: probe readiness liveness ready warm warming starting startup | 探针 就绪 准备好 启动
traffic: traffic | 流量 负载
log: log logs logging logger | 日志 打日志
trace: trace tracing correlation | 追踪 链路 跟踪
id: id ids identifier | 编号 标识
sensitive: sensitive privacy pii personal phone mask masking redact | 敏感 隐私 脱敏 手机号 身份证
secret: secret secrets token tokens credential credentials apikey apikeys accesskey | 密钥 令牌 凭证 秘钥
hardcode: hardcode hardcoded hardcoding embed | 硬编码 写死 写在代码
env: environment env variable variables envvar | 环境变量 环境
config: config configuration configure settings setting conf | 配置 配置文件 设置
password: password passwords login | 密码 登录
hash: hash hashing hashed md5 sha bcrypt argon2 | 哈希 加密 散列
escape: escape escaping sanitize sanitise sanitised sanitized xss html markup | 转义 过滤 跨站
validate: validate validation validating check checks checking verify | 校验 验证 检查 确认
regex: regex regexp regular expression pattern | 正则 正则表达式
upload: upload uploads uploading | 上传
file: file files | 文件
size: size large huge big | 大小 很大 大文件
stream: stream streaming chunk chunks | 流式 分块
time: time clock now timestamp timestamps date dates | 时间 时钟 日期 时间戳 当前时间
timezone: timezone zone utc dst daylight | 时区 夏令时
schedule: schedule scheduled scheduler cron crontab job jobs nightly daily | 定时 定时任务 调度 计划任务 每天
float: float floating rounding precision tolerance | 浮点 浮点数 精度 误差 小数
money: money price prices amount amounts billing payment payments charge charged cents invoice | 金额 价格 支付 扣款 付款 账单 对账
page: pagination paginate paginating offset page pages | 分页 翻页 页码 翻到
limit: limit maximum max cap | 上限 最大 限制
list: list lists array arrays items | 列表 数组
batch: batch batches bulk preload eager | 批量 预加载
loop: loop loops iteration | 循环 遍历
perf: slow slower fast faster performance latency optimise optimize speed bottleneck | 慢 性能 优化 速度 延迟 瓶颈 卡顿
frontend: frontend react component components ui render rendering display displays | 前端 组件 页面 渲染 界面 显示
state: state setstate | 状态
unmount: unmount unmounted unmounting navigation navigate | 卸载 切换页面
effect: effect useeffect cleanup subscription subscribe | 副作用 清理函数 订阅
button: button click clicks clicking clickable onclick | 按钮 点击 连点
submit: submit submits submission form | 提交 表单
order: order orders checkout | 订单 下单
key: key keys | 键
typescript: typescript type types typed ts tsc | 类型
silence: ignore suppress silence any | 屏蔽 绕过
python: python def | 
default: default defaults | 默认 默认值
mutable: mutable shared | 可变 共享
variable: variable variables var | 变量
shell: shell bash script scripts | 脚本
pipeline: pipeline ci workflow workflows actions job runner runners | 流水线 持续集成
smoke: smoke sanity | 冒烟
reload: reload restart | 重新加载 重启
nginx: nginx gateway proxy | 网关 反向代理
syntax: syntax typo | 语法 拼写
ask: ask clarify confirm question unclear vague | 问清楚 确认 询问 澄清
requirement: requirement requirements spec | 需求 要求
bug: bug bugs defect | 缺陷 问题
reproduce: reproduce repro steps expected actual | 复现 重现 步骤 期望
export: export exports csv excel | 导出
user: user users customer customers | 用户 客户
notify: notification notifications email emails notify | 通知 邮件
mobile: mobile app ios android | 移动端 客户端
json: json payload schema | 载荷 结构
null: null nil undefined | 空值
empty: empty blank | 空字符串 为空
encoding: unicode utf | 编码
memoryleak: heapdump snapshot snapshots | 堆快照
diagnose: profile pprof diagnose investigate debug | 定位 排查 调试 分析
old: old older legacy outdated | 旧 老的 过时 遗留
missing: missing unset absent | 缺失 缺少 未设置 没设置
fix: fix fixes fixed fixing repair hotfix hotfixes | 修复 修一下 修好 热修复 修数据 修正
async: async asynchronous asynchronously background | 异步 后台
monorepo: monorepo workspace workspaces | 单仓 工作区
rust: rust crate crates cargo | 
golden: golden snapshot snapshots expected fixture fixtures | 快照 期望输出 基准文件
lint: lint linter eslint warning warnings disable disabled | 告警 警告
ssr: ssr hydration hydrate mismatch | 水合 服务端渲染
packaging: packaging pyproject wheel entrypoint | 打包 入口点
path: path paths directory traversal filename | 路径 目录 文件名
local: local locally laptop workstation | 本地 本机
backfill: backfill backfilling populate populating | 回填 补数据 刷数据
`

type lexicon struct {
	word    map[string][]int // English stem → concepts
	han     map[string][]int // Chinese term → concepts
	maxHan  int              // the longest Chinese term, in runes
	concept []string
}

var lex = buildLexicon(lexiconSource + lexiconMore)

func buildLexicon(src string) *lexicon {
	l := &lexicon{word: map[string][]int{}, han: map[string][]int{}}
	ids := map[string]int{}
	for _, line := range strings.Split(src, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		en, zh, _ := strings.Cut(rest, "|")
		name = strings.TrimSpace(name)
		id, seen := ids[name]
		if !seen {
			// A concept named again adds terms to the first one.
			id = len(l.concept)
			ids[name] = id
			l.concept = append(l.concept, name)
		}
		for _, w := range strings.Fields(en) {
			var t Words
			t.Scan(w)
			for _, tk := range t.Tokens {
				if tk.Han || tk.Part {
					continue
				}
				s := string(t.Buf[tk.StemFrom:tk.StemTo])
				if !containsInt(l.word[s], id) {
					l.word[s] = append(l.word[s], id)
				}
			}
		}
		for _, z := range strings.Fields(zh) {
			if !containsInt(l.han[z], id) {
				l.han[z] = append(l.han[z], id)
			}
			l.maxHan = max(l.maxHan, len([]rune(z)))
		}
	}
	return l
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// WordConcepts returns the concepts of an English word given as its stem
// (Words' StemFrom:StemTo), or nil.
func WordConcepts(stem []byte) []int { return lex.word[string(stem)] }

// HanConcepts calls f with the concept of every lexicon term found in a CJK
// run (a term found twice calls f twice).
func HanConcepts(run []rune, f func(concept int)) {
	for i := range run {
		for n := 1; n <= lex.maxHan && i+n <= len(run); n++ {
			for _, c := range lex.han[string(run[i:i+n])] {
				f(c)
			}
		}
	}
}

// ConceptName returns a concept's name ("" for an unknown one).
func ConceptName(c int) string {
	if c < 0 || c >= len(lex.concept) {
		return ""
	}
	return lex.concept[c]
}

// ConceptCount is the number of concepts in the lexicon.
func ConceptCount() int { return len(lex.concept) }

// LexiconDigest fingerprints the lexicon (the first 16 hex digits of the
// SHA-256 of its source). The offline embedder's output depends on it, so
// a test in package model pins it next to the embedder's version: a
// changed lexicon must come with a new version (stored vectors are then
// re-embedded instead of compared across two vocabularies).
func LexiconDigest() string {
	sum := sha256.Sum256([]byte(lexiconSource + lexiconMore))
	return hex.EncodeToString(sum[:8])
}
