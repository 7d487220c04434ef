package trace

import (
	"errors"
	"testing"
)

func TestParseCommandFamilies(t *testing.T) {
	t.Parallel()
	cases := []struct{ cmd, family string }{
		// Go
		{"go test ./... -run TestX -count=1", "go test"},
		{"go test -race -count=1 ./store/...", "go test"},
		{"cd api && go test ./internal/... 2>&1 | tail -50", "go test"},
		{"go mod tidy", "go mod tidy"},
		{"go -C tools build ./...", "go build"},
		{"GOFLAGS=-mod=mod CGO_ENABLED=0 go build -o bin/app ./cmd/app", "go build"},
		{"go run ./cmd/server --port 8080", "go run"},
		{"go tool pprof cpu.out", "go tool pprof"},
		{"gofmt -l .", "gofmt"},
		{"golangci-lint run ./...", "golangci-lint run"},
		// Python
		{"python -m pytest tests/x.py -k foo", "pytest"},
		{"python3 -m pytest -x -q", "pytest"},
		{"pytest tests/test_cart.py::test_total -vv", "pytest"},
		{"poetry run pytest -q", "pytest"},
		{"uv run --with pytest-cov pytest --cov", "pytest"},
		{"source .venv/bin/activate && pytest", "pytest"},
		{".venv/bin/pytest -x", "pytest"},
		{"/usr/bin/python3.11 -m pip install -r requirements.txt", "pip install"},
		{"pip3 install requests", "pip install"},
		{"python manage.py migrate --noinput", "manage.py migrate"},
		{"./manage.py test accounts", "manage.py test"},
		{"python app/main.py --env staging", "python app/main.py"},
		{"python3 ./app/main.py", "python app/main.py"},
		{"python -c 'import sys; print(sys.path)'", "python -c"},
		{"python -m http.server 8000", "python -m http.server"},
		{"python -m unittest discover -s tests", "python -m unittest"},
		{"coverage run -m pytest tests/", "pytest"},
		{"mypy app --strict", "mypy"},
		{"ruff check . --fix", "ruff check"},
		{"alembic upgrade head", "alembic upgrade"},
		{"alembic -c alembic.ini revision --autogenerate -m 'add orders'", "alembic revision"},
		{"tox -e py311", "tox"},
		// Node
		{"npm run build", "npm run build"},
		{"npm run test", "npm test"},
		{"npm test -- --watch=false", "npm test"},
		{"npm t", "npm test"},
		{"npm i lodash", "npm install"},
		{"npm ci", "npm ci"},
		{"npm --prefix web run lint", "npm run lint"},
		{"pnpm test", "pnpm test"},
		{"pnpm run build", "pnpm build"},
		{"pnpm --filter web build", "pnpm build"},
		{"pnpm exec vitest run", "vitest"},
		{"pnpm dlx prisma migrate dev", "prisma migrate dev"},
		{"yarn", "yarn install"},
		{"yarn build", "yarn build"},
		{"yarn workspace web test", "yarn test"},
		{"npx tsc --noEmit", "tsc"},
		{"npx -y eslint src", "eslint"},
		{"npx jest src/cart.test.ts", "jest"},
		{"./node_modules/.bin/jest --ci", "jest"},
		{"bunx vitest", "vitest"},
		{"bun run dev", "bun dev"},
		{"node server.js", "node server.js"},
		{"node --test", "node --test"},
		{"NODE_ENV=production node dist/index.js", "node dist/index.js"},
		{"npm exec -- eslint .", "eslint"},
		// Rust
		{"cargo test", "cargo test"},
		{"cargo +nightly test --all-features", "cargo test"},
		{"cargo t -p core", "cargo test"},
		{"RUST_BACKTRACE=1 cargo run --release -- --config prod.toml", "cargo run"},
		{"cargo clippy --all-targets -- -D warnings", "cargo clippy"},
		{"cargo nextest run", "cargo nextest run"},
		// Java
		{"mvn -q test", "mvn test"},
		{"mvn clean install -DskipTests", "mvn install"},
		{"./mvnw spring-boot:run", "mvn spring-boot:run"},
		{"mvn -pl core -am -Dtest=CalcTest test", "mvn test"},
		{"./gradlew :app:test --tests com.acme.CalcTest", "gradle test"},
		{"./gradlew clean build", "gradle build"},
		{"java -jar target/app.jar --port 9000", "java -jar app.jar"},
		{"java -cp target/classes com.acme.App", "java com.acme.App"},
		// shells, wrappers, chains
		{"sudo -u postgres psql -c 'select 1'", "psql"},
		{"sudo -E make install", "make install"},
		{"timeout 60 go test ./...", "go test"},
		{"timeout -s KILL 5m npm test", "npm test"},
		{"time make build", "make build"},
		{"nice -n 10 cargo build", "cargo build"},
		{"env FOO=1 BAR=2 pytest", "pytest"},
		{"bash -c 'cd web && npm run build'", "npm run build"},
		{`sh -c "go vet ./..."`, "go vet"},
		{"bash -lc \"make test\"", "make test"},
		{"bash scripts/test.sh --fast", "scripts/test.sh"},
		{"./scripts/test.sh unit", "scripts/test.sh"},
		{"./bin/api", "bin/api"},
		{"set -e; cd /srv/app; ./deploy.sh staging", "deploy.sh"},
		{"export DATABASE_URL=postgres://x && go test ./repo", "go test"},
		{"mkdir -p build && cd build && cmake .. && make -j8", "make"},
		{"make -C services/api lint", "make lint"},
		{"make -j 4 all", "make all"},
		{"make", "make"},
		{"make clean test", "make test"},
		{"go test ./... || true", "go test"},
		{"npm test && echo OK", "npm test"},
		{"go build ./... && ./bin/server", "bin/server"},
		{"(cd web; npm ci)", "npm ci"},
		{"for f in *.go; do gofmt -l $f; done", "gofmt"},
		{"cat out.json | jq '.items | length'", "jq"},
		{"curl -s localhost:8080/health | jq .status", "curl"},
		{"go test ./... 2>&1 | tee test.log | grep FAIL", "go test"},
		{"find . -name '*.go' | xargs gofmt -l", "find"},
		{"git -C repo commit -m 'fix: x'", "git commit"},
		{"git push origin main", "git push"},
		{"git stash pop", "git stash pop"},
		{"docker compose up -d db", "docker compose up"},
		{"docker-compose -f compose.prod.yml pull", "docker compose pull"},
		{"docker --context prod compose -p shop logs -f api", "docker compose logs"},
		{"docker run --rm -it alpine sh", "docker run"},
		{"docker build -t app:latest .", "docker build"},
		{"kubectl -n prod get pods", "kubectl get"},
		{"kubectl rollout restart deploy/api", "kubectl rollout restart"},
		{"helm upgrade --install api ./chart", "helm upgrade"},
		{"terraform -chdir=infra plan", "terraform plan"},
		{"gh pr create --fill", "gh pr create"},
		{"aws s3 cp dist s3://bucket --recursive", "aws s3 cp"},
		{"psql -h localhost -U postgres -d test -c 'select 1'", "psql"},
		{"mysql -u root -p shop < seed.sql", "mysql"},
		{"sqlite3 app.db '.tables'", "sqlite3"},
		{"bundle exec rspec spec/models", "rspec"},
		{"bin/rails db:migrate", "rails db:migrate"},
		{"php artisan migrate --force", "artisan migrate"},
		{"dotnet test", "dotnet test"},
		{"ls -la", "ls"},
		{"echo hello", "echo"},
		{"cat <<EOF > config.yaml\nport: 8080\nEOF\ngo run .", "go run"},
		{"go test ./... # run everything", "go test"},
		{"FOO='a b' go test ./...", "go test"},
	}
	for _, c := range cases {
		got, err := ParseCommand(c.cmd)
		if err != nil {
			t.Errorf("ParseCommand(%q): %v", c.cmd, err)
			continue
		}
		if got.Family != c.family {
			t.Errorf("ParseCommand(%q).Family = %q, want %q", c.cmd, got.Family, c.family)
		}
	}
}

func TestParseCommandDetails(t *testing.T) {
	t.Parallel()
	c, err := ParseCommand("cd api && DEBUG=1 go test ./store/... -run TestGet -count=1 2>&1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != "api" || c.Program != "go" || len(c.Env) != 1 || c.Env[0] != "DEBUG" {
		t.Errorf("got %+v", c)
	}
	wantArgs := []string{"store/...", "TestGet"}
	if len(c.Args) != 2 || c.Args[0] != wantArgs[0] || c.Args[1] != wantArgs[1] {
		t.Errorf("Args = %q, want %q", c.Args, wantArgs)
	}
	if len(c.Flags) != 2 || c.Flags[0] != "-run" || c.Flags[1] != "-count" {
		t.Errorf("Flags = %q", c.Flags)
	}
}

func TestParseCommandEmpty(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "   ", "# just a comment", "&&", "2>&1", "FOO=bar", "|"} {
		_, err := ParseCommand(s)
		if !errors.Is(err, ErrEmptyCommand) {
			t.Errorf("ParseCommand(%q) error = %v, want ErrEmptyCommand", s, err)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("ParseCommand(%q) error is not a *ValidationError", s)
		}
	}
}
