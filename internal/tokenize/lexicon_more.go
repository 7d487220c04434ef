package tokenize

// lexiconMore broadens the bilingual lexicon (offline-hash-v5, q18,
// 2026-11-26) with common terms of software work in both languages:
// databases, HTTP and networking, concurrency, containers and deployment,
// testing, git, frontend, build tools, security, and the words people use
// for symptoms ("hangs", "slow", "leak", "crash", 卡住, 报错, 内存暴涨). A
// line whose concept is already defined adds terms to it; a new name is a
// new concept. The same format as lexiconSource.
const lexiconMore = `
retry: backoff retried reattempt | 重发 退避 指数退避 重新请求 重连
timeout: hung freeze freezes frozen unresponsive deadlines | 卡死了 卡着 没响应 无响应 不返回 一直转圈 等不到
crash: segfault segmentation abort aborts coredump restarted crashloop crashloopbackoff | 闪退 段错误 崩了 进程退出 重启循环
leak: leaks unbounded balloon ballooning | 暴涨 越来越大 涨个不停 持续增长 只增不减 不释放
memory: rss gc garbage allocation allocations alloc | 垃圾回收 分配 内存占用 内存溢出
perf: sluggish throughput qps p99 lag laggy | 很慢 变慢 太慢 慢查询 吞吐 耗时 响应时间 性能下降
error: err stacktrace traceback | 报错了 错误码 堆栈 异常栈 错误信息
fail: failure failures | 不通过 没通过 跑不过 挂掉
flaky: nondeterministic nondeterminism | 不确定 时有时无 有时候 概率性
test: tests pytest jest junit vitest gotest coverage | 测试用例 集成测试 覆盖率 跑测试
fake: mocking mocked spy fakes | 替身 伪造 假数据
goroutine: threads threadpool | 多线程 主线程 子线程 工作线程
mutex: locked unlock rwmutex semaphore atomic | 解锁 读写锁 信号量 原子 原子操作
database: postgres pg mariadb mongodb mongo oracle sqlserver orm | 关系型
query: join joins subquery | 子查询 联表 关联查询 慢查询
index: indexed unindexed | 建索引 加索引 全表扫描
transaction: transactional isolation savepoint | 隔离级别 提交事务
migration: migrate migrating alter ddl | 变更表结构 加列 加字段 改表
http: status header headers cookie cookies | 状态码 请求头 响应头
network: network networking dns tcp udp ip port ports socket refused unreachable econnreset econnrefused | 网络 端口 域名 连接被拒绝 连接重置 断网 网络不通
tls: tls ssl certificate certificates cert certs | 证书 加密连接 握手
auth: auth authentication authenticate oauth jwt session sessions sso | 认证 鉴权 登录态 会话 单点登录
permission: permission permissions authorization authorize role roles rbac acl forbidden denied sudo root | 权限 授权 角色 无权限 拒绝访问
ratelimit: ratelimit throttle throttling throttled quota | 限流 限速 配额 频率限制
queue: queue queues kafka rabbitmq sqs consumer consumers producer | 队列 消息 消费者 生产者 消息队列
event: event events listener listeners emit webhook webhooks | 事件 监听 钩子 回调
callback: callback callbacks promise promises future futures | 回调函数
channel: channel channels chan | 通道 管道
docker: compose podman layer layers | 镜像层 容器化
kubernetes: helm namespace ingress replica replicas | 副本 命名空间 集群
deploy: deployed deploying redeploy canary bluegreen | 灰度 金丝雀 重新部署 发布失败
monitor: monitor monitoring metric metrics alert alerts alerting dashboard prometheus grafana | 监控 指标 告警 报警 看板
disk: disk disks storage volume volumes inode | 磁盘 硬盘 磁盘满
cpu: cpu cpus | 处理器 占用率
git: repo repository checkout clone | 代码库 克隆 检出
merge: pr prs | 合并请求 拉取请求
commit: amend | 修改提交
ignore: gitignore dockerignore | 忽略文件
bisect: bisect blame | 二分 二分查找 追责
stash: stash | 贮藏
build: bundle bundler webpack vite esbuild rollup makefile gradle maven bazel | 打包 构建工具 编译失败
dependency: vendor vendored gomod yarn pnpm | 第三方包 依赖项 包管理
lint: formatting formatter prettier gofmt | 格式化 代码风格
review: review reviewer reviews | 评审 审查 代码审查
refactor: refactor refactoring restructure | 重构 重写 整理代码
docs: doc docs documentation readme comment comments docstring | 文档 注释 说明
frontend: css dom browser jsx vue angular | 浏览器 样式 前端页面
layout: layout scroll scrolling jump jumps shift shifts flicker flickers | 跳动 抖动 闪烁 滚动 错位 布局
state: redux zustand vuex | 状态管理
form: textbox | 输入框 表单项
encoding: charset gbk ascii mojibake garbled | 乱码 字符集 编码问题
string: string strings | 字符串
number: integer integers int int64 overflow | 整数 整型 溢出
decimal: decimal numeric bigdecimal cents | 定点数 十进制 分为单位
float: float32 float64 | 浮点
struct: struct structs class classes | 结构体 对象
call: call calls calling invoke invoked invocation | 调用 调一下 调用方
pointer: pointer pointers | 指针 空指针
autoinc: autoincrement increment serial | 自增 自增长
uuid: uuid uuids guid | 全局唯一
store: store stores stored storing save saves saved persist | 存储 保存 存放 持久化
read: read reads reading fetch fetches fetching | 读取 加载 拉取 获取
write: write writes writing | 写入
copy: copy copies copying | 复制 拷贝
search: search lookup grep | 搜索 查找 检索
sort: sort sorted sorting | 排序
download: download downloads downloading | 下载
stop: stop stops stopped shutdown terminate sigterm sigkill kill graceful | 停止 关闭服务 优雅退出 停机 退出
signal: signal signals sigint | 信号
process: pid daemon | 进程 守护进程
file: filesystem fs | 文件系统
permission: chmod chown | 文件权限
port: listen listening | 监听
nginx: balancer loadbalancer | 代理 负载均衡
cors: cors preflight | 跨域 预检
api: graphql grpc rpc openapi swagger | 远程调用
json: yaml toml xml | 配置格式
i18n: i18n l10n locale translation translations | 国际化 本地化 多语言 翻译
random: random rand seed | 随机 随机数 种子
user: account accounts | 账号 账户
notify: smtp mail | 邮箱
image: png jpg thumbnail | 图片 缩略图
video: video audio media | 视频 音频 媒体
mobile: android ios iphone | 手机 安卓 苹果
chart: chart charts graph | 图表
cli: cli terminal | 命令行 终端
pipeline: gitlab jenkins | 持续部署
lockfile: | 锁定版本
version: semver | 锁版本
nullable: nullable optional | 可为空 可空 允许为空
manual: manual manually hand | 手工 手动 人工
corrupt: corrupt corrupted corruption dirty inconsistent | 脏数据 损坏 数据不一致 不一致
`
