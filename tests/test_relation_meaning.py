"""Dream by meaning (docs/dream.md): the pair rules on the examples docs/dream.md gives, the
neighbour search, and the CLI end to end with the real default model on real stores."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mem0_plugin.cli import dream_cli, memories_cli
from mem0_plugin.dream.relations import meaning_merges
from mem0_plugin.language.analysed import analysed
from mem0_plugin.language.literal_kinds import durations, unit_numbers
from mem0_plugin.language.reading import reading
from mem0_plugin.records import Memory
from mem0_plugin.relation import neighbours
from mem0_plugin.relation.literals import echoed
from mem0_plugin.relation.meaning import relation
from mem0_plugin.relation.two_things import command_swapped, introduced
from mem0_plugin.semantic import Semantic
from mem0_plugin.store import open_store
from mem0_plugin.store.vectors import VectorIndex

# the default model as its memories' vectors are stored: its English rendering blended in ("+en")
STORED_MODEL = "onnx-local/all-MiniLM-L6-v2-int8+en"


def item(text: str, day: int, type_: str = "decision"):
    stamp = f"2026-{day // 28 + 1:02d}-{day % 28 + 1:02d}T10:00:00+00:00"
    return analysed(
        Memory(id=f"m{day}", memory=text, user_id="u", metadata={"type": type_}, created_at=stamp, updated_at=stamp)
    )


@pytest.mark.parametrize(
    "older, newer, cosine, expected",
    [
        (
            "All money is kept as integer cents in BIGINT amount_cents columns — never as floats or NUMERIC.",
            "Store all monetary amounts as integer cents (BIGINT amount_cents columns), never floats or NUMERIC.",
            0.93,
            "merge",
        ),
        (
            "Use PostgreSQL for the ledger, not DynamoDB.",
            "Ledger storage is Postgres; DynamoDB was rejected.",
            0.86,
            "merge",
        ),
        (
            "Sales tax is calculated with TaxJar (app/billing/tax/taxjar_client.py).",
            "Sales tax is calculated with Stripe Tax now; the TaxJar client was removed.",
            0.76,
            "conflict",
        ),
        (
            "Local Postgres from docker-compose listens on port 5432.",
            "Local Postgres from docker-compose listens on port 5433 now (5432 clashes with Homebrew postgres).",
            0.92,
            "conflict",
        ),
        ("The app targets Python 3.11", "The app targets Python 3.12", 0.98, "conflict"),
        (
            "Keep the test fixtures out of the Docker image.",
            "Copy the test fixtures into the Docker image.",
            0.8,
            "conflict",
        ),
        ("Never commit .env files.", "Keep .env files out of git.", 0.8, "merge"),  # "keep … out of" says no
        (  # a capitalised kind of thing ("Entity", "JSON", "Server") names no tool
            "Every Entity change needs a new case in MigrationTest.kt.",
            "Changing a Room table means adding a case to MigrationTest.kt.",
            0.84,
            "merge",
        ),
        # a marked change this close is one subject though the words differ (here in Chinese)
        ("显示屏背光在无操作 15 秒后熄灭。", "背光超时调整为 45 秒，用户反馈 15 秒太短。", 0.78, "conflict"),
        # an unmarked value replaced between 0.64 and 0.76: a conflict unless one template tells of two subjects
        ("The session cookie expires after 12 hours.", "The refresh token cookie expires after 30 days.", 0.75, None),
        (
            "The public API allows 100 requests per second per tenant.",
            "Each tenant may send at most 250 req/s to the public API before getting HTTP 429.",
            0.68,
            "conflict",
        ),
        (
            "Game servers listen for UDP on port 7777.",
            "The UDP listener for match traffic is on 7350.",
            0.67,
            "conflict",
        ),
        (  # an identifier only one text names is detail, not another thing
            "Session state lives in a Pinia store (useSessionStore), persisted to localStorage.",
            "The session is kept in a Pinia store and persisted to localStorage.",
            0.86,
            "merge",
        ),
        (
            "Bundle ID of the app: com.example.weather",
            "Bundle ID of the widget: com.example.weather.widget",
            0.83,
            None,
        ),
        ("Payments go through the billing_api client.", "Payments go through the billing_api_v2 client.", 0.9, None),
        (  # two names of one family by their last part: two things of that family
            "billing-service consumes the orders.v1 topic under group.id billing-cg.",
            "audit-service reads orders.v1 too, under its own group.id audit-cg.",
            0.8,
            None,
        ),
        (  # two named tools in common are evidence in English too
            "Storefront stack: Nuxt 3 with Pinia for state, tested with Vitest, hosted on Netlify.",
            "The shop frontend is a Nuxt 3 app; state goes through Pinia, unit tests use Vitest, and it deploys on Netlify.",
            0.74,
            "merge",
        ),
        ("Use Redis", "Don't use Redis", 0.9, "conflict"),
        ("Prefers window seats", "Always books window seats only on long-haul flights", 0.8, None),
        (
            "Axios timeout for the catalog API client is 8 seconds.",
            "Axios timeout for the payments API client is 30 seconds.",
            0.74,
            None,
        ),
        ("SNOWFLAKE_ACCOUNT is read from the environment", "SNOWFLAKE_ROLE is read from the environment", 0.9, None),
        ("Enable reactStrictMode in next.config.js.", "Keep reactStrictMode off in next.config.js.", 0.75, "conflict"),
        # the same sentence about another thing: left to a judge, never merged
        ("Alice owns the billing service", "Bob owns the billing service", 0.80, None),
        ("The orders table is partitioned by month", "The invoices table is partitioned by month", 0.78, None),
        # ... or about other things in several places of one sentence (at most a third of its words)
        (
            "The refunds service retries failed card refunds 3 times.",
            "The payouts service retries failed bank transfers 3 times.",
            0.80,
            None,
        ),
        (
            "In dbt_project.yml staging models are materialized as views.",
            "In dbt_project.yml marts models are materialized as tables.",
            0.80,
            None,
        ),
        # ... even when the newer marks a change: another client's timeout is not this one's
        (
            "Axios timeout for the catalog API client is 8 seconds.",
            "Axios timeout for the payments API client is now 30 seconds.",
            0.79,
            None,
        ),
        # ... but a plural or a synonym of the predicate in that one place is the same fact
        ("Run the unit tests with pytest", "Run the unit test with pytest", 0.97, "merge"),
        ("Maria reviews all database migrations", "Database migrations are reviewed by Maria", 0.95, "merge"),
        # one-sided negation: a flip only when it negates what the other text says
        (
            "All user-facing strings go through i18next t(); keys live in src/locales/<lang>/common.json.",
            "Text shown to users is never hardcoded: call t() from i18next with keys in src/locales/<lang>/common.json.",
            0.83,
            "merge",
        ),
        ("Commit the ios/Pods directory.", "Never commit ios/Pods; it belongs in .gitignore.", 0.8, "conflict"),
        ("dbt seeds are fine for small static mappings.", "Do not use dbt seeds for static mappings.", 0.7, "conflict"),
        ("Feature flags are read at startup.", "Feature flags are banned.", 0.7, "conflict"),  # negates no word
        ("Cache the /health endpoint for 5 seconds.", "No caching for the /health endpoint.", 0.8, "conflict"),
        ("Type checking runs in CI.", "Type checking does not run in CI.", 0.9, "conflict"),
        ("Use strict mode in tsconfig.", "Strict mode is not enabled in tsconfig.", 0.85, "conflict"),  # a generic word
        ("Use pnpm for installs.", "pnpm is not used for installs anymore.", 0.85, "conflict"),
        # ... in Russian (the word before the negation counts too: its word order is free) and Chinese
        (
            "В debug-сборках подключаем Flipper.",
            "Flipper в debug-сборки не добавляем: он замедляет сборку.",
            0.85,
            "conflict",
        ),
        (
            "Иконки интерфейса импортируем из lucide-react.",
            "Для иконок в дашборде используем только lucide-react, другие наборы не подключаем.",
            0.8,
            "merge",
        ),
        (
            "所有网络请求都通过src/api/client.ts里的封装发出，不要直接用fetch。",
            "接口调用统一走src/api/client.ts的客户端封装。",
            0.81,
            "merge",
        ),
        ("缓存用Redis。", "缓存不要用Redis。", 0.85, "conflict"),
        # "rather than" states a preference, not a change: no marked change, so no conflict
        (
            "User prefers SQL CTEs over nested subqueries in dbt models.",
            "In dbt SQL the user wants WITH clauses rather than subqueries stacked inside each other.",
            0.73,
            None,
        ),
        # below 0.78 a merge needs shared evidence: in Russian or Chinese text, two Latin names in common
        (
            "Колонки с датой и временем в хранилище всегда в UTC, а перевод в местный часовой пояс делает BI.",
            "Никаких локальных часовых поясов в таблицах: только UTC, а пересчёт для отчётов выполняется на стороне BI.",
            0.72,
            "merge",
        ),
        ("Колонки с датой в хранилище всегда в UTC.", "Пересчёт в местное время для отчётов делает BI.", 0.72, None),
        # a condition the other text states in its own words adds nothing
        (
            "On a USB-connected Android phone, forward Metro's port 8081 with adb reverse tcp:8081 tcp:8081.",
            "Metro runs on port 8081; run adb reverse tcp:8081 tcp:8081 when testing on a USB Android device.",
            0.84,
            "merge",
        ),
        (
            "A nightly cleanup deletes idempotency_keys rows once they are older than 24 hours.",
            "Idempotency keys are kept for 24 hours in the idempotency_keys table, then purged by a nightly job.",
            0.83,
            "merge",
        ),
        # ... nor does a condition word inside a compound, or "once" counting times
        (
            "Raw data lands in s3://acme-lake-raw/ partitioned by dt=YYYY-MM-DD and is never modified.",
            "The raw zone s3://acme-lake-raw/ is append-only: files are written once under dt=YYYY-MM-DD.",
            0.79,
            "merge",
        ),
        # ... but a condition the other does not state is one
        (
            "Run the full e2e suite before merging.",
            "Run the full e2e suite before merging only when a PR touches checkout or billing pages.",
            0.78,
            None,
        ),
        # the shorter sentence continued by the longer one: a scope added, no merge ...
        (
            "Use react-native-fast-image for remote images.",
            "Use react-native-fast-image for remote images in feed lists, with cache control 'immutable'.",
            0.86,
            None,
        ),
        # ... but a statement added after it ends is more of the same fact
        ("Use pnpm for installs.", "Use pnpm for installs. It is much faster on CI.", 0.9, "merge"),
        # below 0.78, a package-like name both hold is shared evidence; an ordinary compound is not
        (
            "Tailwind classes are sorted automatically by prettier-plugin-tailwindcss; don't reorder them by hand.",
            "Class order in JSX is whatever prettier-plugin-tailwindcss produces.",
            0.755,
            "merge",
        ),
        (
            "Finance reports are read-only for analysts.",
            "Dashboards shared with contractors are read-only.",
            0.74,
            None,
        ),
        # ... as is a number of two digits both hold, with a fifth of the words in common
        (
            "Keep commit subjects imperative and at most 72 characters; the user asked for that.",
            "User wants short commit messages in imperative mood, max 72 chars in the subject line.",
            0.768,
            "merge",
        ),
        # "keep X off" is a prohibition whatever X is written like
        ("Enable HTTP/2 on the upstream connections.", "Keep HTTP/2 off for upstream connections.", 0.8, "conflict"),
        # "replaced A with B" moves away from A
        (
            "JWTs are verified with the golang-jwt library.",
            "We replaced golang-jwt with lestrrat-go/jwx for JWT verification.",
            0.8,
            "conflict",
        ),
        # a number with its unit on it is a value, in any script; "502s" is a plural, no duration
        ("The upstream read timeout is 30s.", "The upstream read timeout is 45s.", 0.95, "conflict"),
        ("默认的请求体大小上限是10MB。", "请求体大小上限已经改为25MB。", 0.85, "conflict"),
        # an exception is a condition the other text never states, even with the same words
        (
            "User prefers table-driven tests in Go.",
            "User prefers table-driven tests in Go, except for fuzz tests.",
            0.93,
            None,
        ),
        # "instead of" states a preference, not a change
        (
            "Don't use panics for control flow in handlers; return errors and let the middleware write the response.",
            "Handlers must return errors instead of panicking; the error middleware turns them into HTTP responses.",
            0.8,
            "merge",
        ),
        # one switch set on in one text and off in the other is a flip, written without a negation
        (
            "Set catchup=True on new DAGs so missed intervals are backfilled.",
            "New DAGs must use catchup=False; backfills are run explicitly with airflow dags backfill instead.",
            0.66,
            "conflict",
        ),
        ("Keep debug: on for the staging workers.", "Keep debug: on for staging workers.", 0.97, "merge"),
        # an identifier both name is their subject, even when no other word is shared
        (
            "Android minSdkVersion is 23.",
            "minSdkVersion raised to 26 because the new biometrics library requires it.",
            0.7,
            "conflict",
        ),
        # "switched from A to B": a move away from what the older text says, however close the texts
        (
            "Package manager is npm; commit package-lock.json.",
            "Switched from npm to pnpm; package-lock.json was deleted, commit pnpm-lock.yaml instead.",
            0.7,
            "conflict",
        ),
        # a command written as code in one text and bare in the other is one command, not a
        # value replaced (and no conflict)
        (
            "To rebuild the search index, run `python scripts/build_search.py` after mkdocs build.",
            "After `mkdocs build`, regenerate the search index with `python scripts/build_search.py`.",
            0.93,
            "merge",
        ),
        # a path inside the other text's command is written by both
        (
            "Integration tests need a registry on localhost:5000: `docker compose -f tests/compose.yml up -d`.",
            "Bring up tests/compose.yml before the integration tests: it runs the registry on localhost:5000.",
            0.92,
            "merge",
        ),
        # an em dash does not make an English text foreign (there every Latin word names a tool)
        (
            "Don't write internal links as absolute site URLs; link to the .md file so MkDocs can check them.",
            "Internal links should be relative links to .md files, not full URLs — otherwise MkDocs cannot check them.",
            0.83,
            "merge",
        ),
        # Japanese "X ではなく Y" ("Y rather than X") says what "don't use X" says
        (
            "ログ出力には tracing を使い、println! は使わない。",
            "println! ではなく tracing でログを出すこと。",
            0.86,
            "merge",
        ),
        # Chinese 缺 (lacking) negates as "without" does: no flip against 没有 (not)
        (
            "运行 `python scripts/i18n_status.py` 可以查看每种语言还有哪些页面没有翻译。",
            "想知道各个语言还缺哪些页面的翻译，就跑一下 `python scripts/i18n_status.py`。",
            0.87,
            "merge",
        ),
        # a number one text adds is no value replaced: no conflict ("per image")
        (
            "画像は docs/assets/img/ に置き、1枚あたり 300KB 以下に圧縮すること。",
            "docs/assets/img/ 配下に追加する画像は、300KB 以内に収まるよう圧縮してから入れる。",
            0.83,
            None,
        ),
        # a word and a value both differ: two things, each with its own value
        (
            "Triton serves its gRPC inference API on port 8001.",
            "Triton serves its HTTP inference API on port 8000.",
            0.9,
            None,
        ),
        # a placeholder written with and without its brackets is one value
        (
            "Metrics logged from LightningModules use `split/metric` names such as `val/loss`.",
            "Name logged metrics `<split>/<metric>` (e.g. val/loss) in the Lightning modules.",
            0.88,
            "merge",
        ),
        # "use B instead" says "not A" as "don't use A" does: no flip, one fact
        (
            "Don't use `ref.read` inside a widget's build method: it doesn't rebuild, which left the "
            "seat-availability UI stale; use `ref.watch` in build.",
            "Seat availability showed stale data because build() called `ref.read`; in build methods always "
            "use `ref.watch` instead.",
            0.77,
            "merge",
        ),
        # Chinese 关闭 (turned off) negates, 代替 ("instead") prohibits: no flip
        (
            "dev flavor 下 Firebase Crashlytics 的崩溃收集是关闭的，只有 staging 和 prod 构建才会上报崩溃。",
            "只有 staging/prod 构建会向 Crashlytics 上报崩溃，dev 环境下不收集。",
            0.8,
            "merge",
        ),
        (
            "不要在 `LightningModule.__init__` 里对张量调用 `.cuda()`，DDP 训练时所有进程都会挤到 GPU 0；"
            "应改用 `register_buffer` 或 `self.device`。",
            "在 LightningModule 的 __init__ 中调用 .cuda() 会让 DDP 的每个进程都占用 GPU 0——请用 register_buffer / "
            "self.device 代替。",
            0.93,
            "merge",  # (None until the member was read by its two names: no conflict either way)
        ),
        # "Y вместо X" is "Y instead of X": the same choice as "Y, а не X"
        (
            "Для очереди задач выбрали Redis Streams вместо Kafka: проще эксплуатация.",
            "Очередь задач — Redis Streams, а не Kafka, потому что её проще поддерживать.",
            0.84,
            "merge",
        ),
        # a choice between the two names the other text also names, said with ではなく
        (
            "湿度センサーは BME280 を採用。DHT22 より精度が高いため。",
            "精度が高いので、湿度センサーには DHT22 ではなく BME280 を使う。",
            0.8,
            "merge",
        ),
        # "only in tests" and "none outside tests" are one restriction
        (
            "Panicking with expect() is only acceptable in test code.",
            "No `expect()` calls outside tests.",
            0.86,
            "merge",
        ),
        # Russian "без" negates the word after it, not the identifier before it
        (
            "Сборка релиза читает ключ из `RELEASE_SIGNING_KEY`; без него `make release` падает.",
            "`make release` требует RELEASE_SIGNING_KEY, иначе сборка завершается с ошибкой.",
            0.93,
            "merge",
        ),
        # another environment's value: named on both sides, or a side environment on one
        (
            "Billing webhook URL in staging: https://hooks.staging.example.net/billing",
            "Billing webhook URL in production: https://hooks.example.net/billing",
            0.95,
            None,
        ),
        (
            "Feature flags are read from https://flags.example.net/v2/flags.json.",
            "Staging feature flags come from https://flags-staging.example.net/v2/flags.json.",
            0.86,
            None,
        ),
        (
            "Staging feature flags come from https://flags-staging.example.net/v2/flags.json.",
            "Production feature flags moved to https://cdn.example.net/flags.json after the CDN switch.",
            0.74,
            None,
        ),
        # ... but a text that names no environment is about the same place as one saying "local"
        (
            "The local docs preview listens on http://127.0.0.1:8000.",
            "The docs preview listens on http://127.0.0.1:8010 (set in site.yml).",
            0.86,
            "conflict",
        ),
        # one command written twice: its words in another order, its program with its path or runner
        (
            "Materialize one asset locally: `dagster asset materialize --select staging/orders -m pylon.definitions`.",
            "One asset without the UI: `dagster asset materialize -m pylon.definitions --select staging/orders`.",
            0.96,
            "merge",
        ),
        (
            "Never run `php artisan migrate:fresh` on a shared database: it drops every table.",
            "Do not run `artisan migrate:fresh` against a shared database; it wipes all tables.",
            0.91,
            "merge",
        ),
        # ... but another program's command is another command, even when the text names the old one
        (
            "The deploy hook installs frontend deps with `npm ci && npm run build`.",
            "Switched the deploy hook to `pnpm install --frozen-lockfile && pnpm run build` (npm ci took 4 min).",
            0.8,
            "conflict",
        ),
        # Russian "никаких X" ("no X at all") negates X as "запрещён" prohibits it
        (
            "Суммы денег в событиях храним в BigDecimal строкой, никаких double.",
            "double для денег в событиях запрещён: BigDecimal строкой.",
            0.9,
            "merge",
        ),
        ("Суммы денег в событиях храним в double.", "Никаких double для денег в событиях.", 0.9, "conflict"),
        # a package's name written as words
        (
            "Chose the CRXJS Vite plugin over Plasmo: we keep manifest.json hand-written.",
            "Bundler: `@crxjs/vite-plugin`, not Plasmo, so we own manifest.json.",
            0.8,
            "merge",
        ),
        # a Japanese negation negates the word before its verb: "直接 publish しない" is no flip of a
        # text that never says publish, "unwrap() を使わない" and "有効にしない" are
        (
            "ステータス変更イベントは outbox テーブルに書き込み、relay プロセスが NATS へ流す。",
            "ステータス変更は outbox テーブル経由で NATS に流す。トランザクション内で直接 publish しないこと。",
            0.8,
            "merge",
        ),
        ("本番コードでは unwrap() を使わない。", "本番コードでも unwrap() を使う。", 0.9, "conflict"),
        (
            "Crashlytics は debug ビルドでも有効にする。",
            "Crashlytics は debug ビルドでは有効にしない。",
            0.9,
            "conflict",
        ),
        # a list of words written with slashes is no path
        (
            "Flavors: dev, staging, prod. Entry points lib/main_dev.dart and lib/main_prod.dart.",
            "Three flavors (dev/staging/prod), with entry points lib/main_dev.dart and lib/main_prod.dart.",
            0.96,
            "merge",
        ),
        # a number with its digits grouped is the same number: "10_000" (code), "10,000" (prose)
        (
            "The importer commits every 5000 rows (IMPORT_BATCH = 5000).",
            "The importer commits every 10_000 rows.",
            0.9,
            "conflict",
        ),
        ("The importer commits every 10,000 rows.", "The importer commits after each 10000 rows.", 0.95, "merge"),
        # a developer's machine is one environment, said "local", "locally" or "dev"
        (
            "claims-service listens on 8080 locally (default quarkus.http.port).",
            "claims-service dev port is now 8081 since policy-service took 8080 in docker-compose.yml.",
            0.57,
            "conflict",
        ),
        # the newer text names the old value as the one it replaced: a change, though both hold it
        (
            "The notifications worker polls the queue every 30 seconds.",
            "The notifications worker now polls the queue every 10 seconds; 30 was too slow for reminders.",
            0.55,
            "conflict",
        ),
        # ... only when it marks the change: two values side by side are two settings
        (
            "The notifications worker polls the queue every 30 seconds.",
            "The notifications worker polls the queue every 10 seconds in staging and 30 in production.",
            0.82,
            None,
        ),
        # a word that moved is no word swapped: "… is at <url>" / "… URL is <url>"
        (
            "The artifact store is at https://artifacts.internal/vision.",
            "The artifact store URL is https://store.corp.example.com/vision.",
            0.8,
            "conflict",
        ),
        # "keep the X off" prohibits as "keep X off" does
        (
            "Enable the watchdog in release builds.",
            "Keep the watchdog off in release builds.",
            0.8,
            "conflict",
        ),
        # two names of one hyphenated family: two services, not one fact said twice
        (
            "End-to-end tests need the fake broker running: docker compose up fake-broker.",
            "End-to-end tests for the billing API need docker compose up fake-billing.",
            0.8,
            None,
        ),
        # a paraphrase well below MERGE_COSINE, with most of its words and names in common
        (
            "Tessera is the ingestion service for the fleet telemetry platform, written in Rust and deployed on Nomad.",
            "Project: Rust service that ingests fleet telemetry for the platform; deployed as Nomad jobs.",
            0.67,
            "merge",
        ),
        # a setting's value written as an assignment is a value: "PORT=4000" / "PORT=8080"
        (
            "The web container listens on port 4000 (`PORT=4000`).",
            "The web container binds to `PORT=8080`.",
            0.87,
            "conflict",
        ),
        # a number with its unit on it, in Japanese text: CPU millicores
        (
            "ワーカーの CPU request は 250m にする。",
            "ワーカーの CPU request は 100m とする。",
            0.88,
            "conflict",
        ),
        # "avoiding X" says "not X" as "so we don't need X" does: one decision
        (
            "Decision: jobs run on the database queue, avoiding a Redis dependency.",
            "We run jobs on the database queue so we don't have to run Redis.",
            0.82,
            "merge",
        ),
        # a module's member named by its own name in the other text is the same name
        (
            "Don't call `Repo` from a controller; go through the `Shop.Orders` context.",
            "Anti-pattern: calling `Shop.Repo` in a controller. Use the `Shop.Orders` context instead.",
            0.86,
            "merge",
        ),
        # a dotted name and the same name qualified: "tabs.onUpdated" / "chrome.tabs.onUpdated"
        (
            "Counts doubled because tabs.onUpdated fires twice per load; recount only on status complete.",
            "Fixed doubled counts: `chrome.tabs.onUpdated` fires twice per load, so recount only on status complete.",
            0.86,
            "merge",
        ),
        # two HTTP endpoints, each with its own limit
        (
            "Rate limit for `PUT /items`: 60 requests/min per user.",
            "Rate limit for `GET /items`: 120 requests/min per user.",
            0.9,
            None,
        ),
        # the production and the beta listing: two things, not one said twice
        (
            "Production store listing ID is abcdefghijklmnop.",
            "Beta store listing ID is ponmlkjihgfedcba.",
            0.7,
            None,
        ),
        # a negation inside a condition states a requirement: no flip
        (
            "Release builds run `wasm-opt -O3`, so binaryen must be installed and on PATH.",
            "wasm-opt -O3 is part of the release build — if binaryen isn't on PATH the build fails.",
            0.86,
            "merge",
        ),
        # "Y, а не X" beside a text naming the same two: the same choice, no flip
        (
            "Очередь храним в `Postgres`, а не в Redis — в проде Redis нет.",
            "Для очереди используем Postgres, потому что Redis в проде недоступен.",
            0.83,
            "merge",
        ),
        # two prohibitions of two things both hold
        (
            "不要在热路径里使用 `std::map`，节点分配太慢。",
            "不要在热路径里使用 `std::any`，类型擦除会带来堆分配。",
            0.82,
            None,
        ),
        # the other text names what this one chose over something: the same choice
        (
            "Decided to send reminders through Sidekiq rather than the default async adapter, which loses jobs on deploy.",
            "why Sidekiq for reminders? the async adapter throws away jobs on each deploy",
            0.87,
            "merge",
        ),
        # ... but "use B instead", whose rejected one comes first, still flips
        (
            "Soft-delete records through `default_scope { where(deleted_at: nil) }`.",
            "Don't put soft-delete filtering in a default_scope — it leaks into associations; use the `kept` scope instead.",
            0.8,
            "conflict",
        ),
        # a small number written as a word is the same number
        (
            "Session: added snapshot recovery for channel 310 and 3 new unit tests pass.",
            "Today: implemented snapshot recovery for channel 310; three new unit tests green.",
            0.88,
            "merge",
        ),
        # a sentence-final "only" restricts what it follows, which both texts say
        (
            "The ring buffer connects decoder and book builder; its capacity N must be a power of two.",
            "Ring buffer between decoder and book builder. Power-of-two N only.",
            0.8,
            "merge",
        ),
        # "otherwise" states the "unless" of the other text the other way round
        (
            "`perf record -g` gives garbage stacks unless the decoder is built with `-fno-omit-frame-pointer`.",
            "Build the decoder with -fno-omit-frame-pointer; otherwise `perf record -g` gives garbage stacks.",
            0.85,
            "merge",
        ),
        # a kind of thing (CI, GPU, OS, UI) is no tool: naming it on one side is no tool swapped
        (
            "The nightly CI job rebuilds the search index from Postgres.",
            "Each night a GitHub Actions job rebuilds the search index from Postgres.",
            0.72,
            "merge",
        ),
        # a tool's short and long names are one tool (Wasm / WebAssembly, JS / JavaScript)
        (
            "Image filters are compiled to Wasm and the JS side only draws the result.",
            "Image filters are compiled to WebAssembly; JavaScript only draws the result.",
            0.84,
            "merge",
        ),
        # an English text with a micro sign is still English (not every Latin word a tool name)
        (
            "Never log synchronously on the hot path: one blocking write costs ~40 µs at p99; use the async logger.",
            "Synchronous logging on the hot path is banned (about 40 µs p99 per write), go through the async logger.",
            0.83,
            "merge",
        ),
        # a literal written as code in one text and as a word in the other is evidence both share
        (
            "Pixel buffers crossing into JS are always `Uint8ClampedArray` in RGBA8; never pass f32 buffers.",
            "Only RGBA8 data crosses the JS boundary, as a Uint8ClampedArray; f32 working buffers stay in Rust.",
            0.76,
            "merge",
        ),
        # "sub-" makes an ordinary compound, not a family of package names
        (
            "Order book updates must stay sub-millisecond at p99.",
            "p99 for order book updates: sub-ms, always.",
            0.81,
            "merge",
        ),
        # a directory with or without its closing slash is one path
        (
            "Protobuf sources live in `proto/api/v2/`; regenerate with `buf generate`.",
            "After editing anything under proto/api/v2, regenerate with buf generate.",
            0.77,
            "merge",
        ),
        # two tools named in both texts: details differ, no tool was swapped
        (
            "Статику отдаёт WhiteNoise прямо из Django, без nginx и S3.",
            "Решили не ставить nginx для статики: WhiteNoise внутри gunicorn хватает.",
            0.72,
            "merge",
        ),
        # a text naming production with staging holds where the other's value does
        (
            "The OpenSearch cluster runs version 2.11.",
            "Prod and staging OpenSearch clusters run version 2.15.",
            0.85,
            "conflict",
        ),
        # a flip over one setting, one text naming a fixture besides: still one setting
        (
            "Tests run Celery tasks eagerly: CELERY_TASK_ALWAYS_EAGER=True in settings/test.py.",
            "Don't use CELERY_TASK_ALWAYS_EAGER in tests; use the celery_worker fixture instead.",
            0.93,
            "conflict",
        ),
        # "fails unless X" is said again as "needs X"
        (
            "`./gradlew integrationTest` fails unless the Docker daemon is running.",
            "Integration tests (`./gradlew integrationTest`) need Docker running for Testcontainers.",
            0.92,
            "merge",
        ),
        # one program run with two tasks: two commands, neither a merge nor a conflict
        (
            "`./gradlew test` runs only the unit tests; tests tagged it are skipped.",
            "`./gradlew integrationTest` runs only the tests tagged it.",
            0.89,
            None,
        ),
        # in Chinese, "run" and "again" after a negation say nothing of their own: "不要再跑 X" negates X
        (
            "每次部署都自动执行 prisma db seed，保证基础内容类型存在。",
            "部署时不要再跑 prisma db seed，在生产上跑会覆盖编辑改过的默认内容。",
            0.93,
            None,
        ),
        # a Russian negation that ends its sentence negates the word before it ("поднимать не нужно")
        (
            "Материализовать один ассет локально: `dagster asset materialize --select staging/orders`.",
            "Один ассет можно запустить без UI: `dagster asset materialize --select staging/orders`, вебсервер поднимать не нужно.",
            0.95,
            "merge",
        ),
        # ... but two kinds of thing that replace one another are two values, not detail
        ("Inference runs on the CPU.", "Inference runs on the GPU.", 0.83, None),
        ("The docs site is in English.", "The docs site is in Chinese.", 0.77, None),
        ("Model serving runs on CPU nodes.", "Model serving runs on GPU nodes (T4).", 0.76, None),
        # the same sentence with one tool put in another's place never merges, however close
        # (the lexical rule proposes it as a conflict: "Deploy to ECS" / "Deploy to Vercel")
        (
            "Django sends transactional email through SES; Celery retries failures.",
            "Django sends transactional email through Postmark; Celery retries failures.",
            0.93,
            None,
        ),
        # ... but one tool's two names are one tool
        ("Use Postgres for the auth service.", "Use PostgreSQL for the auth service.", 0.95, "merge"),
        # a Latin word hyphenated to a Russian one is still a name: the web server is not the worker
        ("Web-сервер слушает порт 3000.", "Worker слушает порт 3000.", 0.79, None),
        # two platforms, each with its own way (web / mobile; iOS and Android are mobile)
        (
            "Mobile apps take cards with Stripe PaymentSheet (stripe-ios / stripe-android); the client secret comes from the CreatePaymentIntent RPC.",
            "Web checkout takes cards with Stripe Elements (Payment Element); the client secret comes from the CreatePaymentIntent RPC.",
            0.75,
            None,
        ),
        # a deploy preview is an environment of its own, beside production
        (
            "Production docs deploy from main to https://docs.example.dev via Netlify.",
            "PR deploy previews land on https://deploy-preview-<PR>--docs.netlify.app, not on docs.example.dev.",
            0.74,
            None,
        ),
        # any program quoted with two tasks is two commands
        (
            "`fable-docs serve` runs sphinx-autobuild with live reload; it writes nothing to build/html.",
            "`fable-docs build` renders Sphinx and MkDocs into build/html.",
            0.85,
            None,
        ),
        # a generic word ("service") in a swapped place leaves the other swaps to tell: another subject
        (
            "Query API exposes Prometheus metrics on :9101/metrics.",
            "Ingest service exposes Prometheus metrics on :9100/metrics.",
            0.80,
            None,
        ),
        # "we turn off X" says no to X as "X is disabled" does: one statement
        (
            "In the dev flavor we turn off Crashlytics collection with setCrashlyticsCollectionEnabled(false), "
            "to keep local crashes out of the console.",
            "Crashlytics collection is disabled in the dev flavor (setCrashlyticsCollectionEnabled(false)) so "
            "local crashes don't pollute the dashboard.",
            0.79,
            "merge",
        ),
        # "additionally" adds to what the other says, as "also" does
        (
            "Atlantis apply requires an approving review (apply_requirements: [approved]) in atlantis.yaml.",
            "For the prod project Atlantis additionally requires the PR to be mergeable "
            "(apply_requirements: [approved, mergeable]).",
            0.68,
            None,
        ),
        # a version with letters in it is one version: Unity's 2022.3.21f1 replaced by 2022.3.45f1 is
        # no merge; the change is marked and close, so a conflict though their Russian words share little
        (
            "Версия редактора (ProjectSettings/ProjectVersion.txt): 2022.3.21f1.",
            "Перешли на редактор 2022.3.45f1, ProjectVersion.txt обновлён.",
            0.81,
            "conflict",
        ),
        (
            "The Unity editor version is 2022.3.21f1 (ProjectSettings/ProjectVersion.txt).",
            "The Unity editor version is 2022.3.45f1 now (ProjectSettings/ProjectVersion.txt).",
            0.95,
            "conflict",
        ),
        # a quoted command's task of two words counts whole: two subcommands of one command group
        (
            "`pscale deploy-request deploy falcon <number>` applies an approved schema change to main.",
            "`pscale deploy-request create falcon dev` opens the schema change from the dev branch for review.",
            0.85,
            None,
        ),
        # an unmarked value replaced where each text names a tool the other does not: each tool's own value
        (
            "`syft convert sbom.spdx.json -o cyclonedx-json` produces the CycloneDX copy the security team "
            "uploads to Dependency-Track.",
            "`syft convert sbom.spdx.json -o github-json` produces the payload we POST to GitHub's dependency "
            "submission API.",
            0.77,
            None,
        ),
        # a file's extension is no member of a module: "main.log" is not echoed by "renderer.log"
        (
            "Main process logs go through electron-log and land in userData/logs/main.log.",
            "Renderer logs go through electron-log/renderer and land in userData/logs/renderer.log.",
            0.71,
            None,
        ),
        # "вместо" states a preference, as "instead of" does, not a change
        (
            "Для связи между серверами используем WireGuard (wg0), а не OpenVPN: модуль уже в ядре, конфиг проще.",
            "Mesh между серверами сделали на WireGuard вместо OpenVPN — поддержка в ядре и конфиги короче.",
            0.88,
            "merge",
        ),
        # Japanese "やめた" (stopped doing) says no
        (
            "Alertmanager の通知は PagerDuty に加えて Slack #ops-alerts にも送る。",
            "Slack #ops-alerts への通知はやめた。本番のアラートは PagerDuty のみ。",
            0.80,
            "conflict",
        ),
        # an aside in brackets is detail when sentences are lined up: another table, the same sentence
        (
            "companies has a FULLTEXT index on (name, domain) used by global search.",
            "contacts has a FULLTEXT index on (first_name, last_name, email) used by global search.",
            0.80,
            None,
        ),
        # a path and a value both differ, unmarked: each path has its own value
        (
            "CloudFront default_ttl for the /static/* behavior is 86400.",
            "CloudFront default_ttl for the /api/* behavior is 0 (no caching, all headers forwarded).",
            0.87,
            None,
        ),
        # a placeholder written two ways, and filled by an example: one convention
        (
            "翻译文件放在 src/i18n/locales/<lang>/common.json,key 用 camelCase 并按页面命名空间,如 plantDetail.waterNow。",
            "i18next 文案 key 一律 camelCase、按页面分组(plantDetail.xxx),文件路径是 src/i18n/locales/{lng}/common.json。",
            0.89,
            "merge",
        ),
        # a folder, and its files by a placeholder: one place
        (
            "Slash commands: one file per command in src/commands/<name>.ts, exporting `data` and `execute`.",
            "Each Discord slash command lives in src/commands/ as its own file that exports `data` and `execute`.",
            0.80,
            "merge",
        ),
        # a placeholder filled by an example, the directory with or without its closing slash
        (
            "Koin modules are split per feature: featureXModule in feature/x/di/, all listed in appModules in shared/di/Modules.kt.",
            "Each feature declares its own Koin module under feature/<name>/di and gets appended to appModules (shared/di/Modules.kt).",
            0.90,
            "merge",
        ),
        # one length of time in two units: one value; another length: a value replaced
        (
            "Каталог товаров кэшируем в Workers KV (namespace CATALOG_CACHE) с TTL 300 секунд, инвалидация по вебхуку из CMS.",
            "Решили: ответы каталога кладём в KV CATALOG_CACHE на 5 минут, при публикации в CMS вебхук удаляет соответствующие ключи.",
            0.69,
            "merge",
        ),
        ("The catalog cache TTL is 300 seconds.", "The catalog cache TTL is 10 minutes.", 0.93, "conflict"),
        ("The catalog cache TTL is 300 seconds.", "The catalog cache keeps entries for 5 minutes.", 0.90, "merge"),
        # a Latin word ending a Russian sentence, and a package name or a path run up to Chinese text
        ("Логи пишем в JSON через structlog.", "structlog настроен на вывод логов в формате JSON.", 0.75, "merge"),
        (
            "国际化使用next-intl，翻译文件放在messages/目录下。",
            "多语言方案选的是next-intl，文案JSON都在messages/里。",
            0.74,
            "merge",
        ),
        # an environment named up against Japanese text ("stg環境") is one: the staging one
        (
            "ステージングの App Service は app-meridian-stg。デプロイスロット warmup に入れてからスワップする。",
            "stg環境：Azure App Service 名は app-meridian-stg、warmup スロットへデプロイ後に production スロットとスワップ。",
            0.75,
            "merge",
        ),
        # "was dropped", "considered and abandoned" say no, as "rejected" does
        (
            "Use Sentry for error tracking in prod and staging; Bugsnag was evaluated and rejected.",
            "Error tracking is Sentry (prod + staging). Bugsnag was considered and dropped.",
            0.94,
            "merge",
        ),
        ("The CLI supports Node 16 and later.", "Support for Node 16 was dropped from the CLI.", 0.85, "conflict"),
        (
            "Redis was considered and abandoned for the session store.",
            "We use Redis for the session store.",
            0.85,
            "conflict",
        ),
        # an identifier by its pattern and one it covers: shared evidence, no identifier replaced
        (
            "Money is stored as integer cents (PositiveIntegerField amount_cents), never DecimalField or float.",
            "Store prices as int cents in *_cents columns; no float/Decimal model fields for money.",
            0.778,
            "merge",
        ),
        (
            "macOS notarization uses notarytool via @electron/notarize; credentials come from APPLE_API_KEY, "
            "APPLE_API_KEY_ID and APPLE_API_ISSUER in CI.",
            "Apple's notary service is reached from CI with an App Store Connect API key (the three APPLE_API_* "
            "secrets); altool is gone, so it's notarytool driven by @electron/notarize.",
            0.71,
            "merge",
        ),
        # a count in thousands; statuses in the plural
        (
            "Don't use from/size pagination past 10k hits; use search_after with a PIT instead.",
            "Avoid deep offset paging beyond index.max_result_window (10000) — switch to point-in-time + search_after.",
            0.76,
            "merge",
        ),
        (
            "Fixed the 502s on long uploads by raising the upstream read timeout; the root cause was the 30s default (RELAY-88).",
            "RELAY-88: uploads taking over a minute failed with 502 because of the 30s default upstream read timeout; raising it fixed them.",
            0.90,
            "merge",
        ),
        ("Search pages stop at 10k hits.", "Search pages stop at 20000 hits.", 0.95, "conflict"),
        ("Upstream requests time out after 30s.", "Upstream requests time out after 45 seconds.", 0.95, "conflict"),
        ("Upstream requests time out after 30s.", "Upstream requests time out after 30 seconds.", 0.97, "merge"),
        # a size beside a bare number of another thing is not compared (a hard negative stays apart)
        (
            "Partner exports are Parquet with snappy compression because their Spark 2 cluster can't read zstd.",
            "Lake Parquet files are written with zstd compression and ~128MB row groups.",
            0.70,
            None,
        ),
        # a folder without its closing slash, and the files in it by a glob
        (
            "After touching any .proto file under proto/rift/v1, regenerate the code with buf generate.",
            "Regenerate Go stubs via `buf generate` whenever `proto/rift/v1/*.proto` changes.",
            0.76,
            "merge",
        ),
        # a cloud is a kind of thing beside its services ("S3", "DynamoDB" / "your AWS profile"); two clouds are two
        (
            "Terraform state for ember-cms lives in S3 bucket emb-tfstate, locking via DynamoDB table emb-tf-locks, "
            "region eu-west-1.",
            "Before running terraform plan, make sure your AWS profile can reach eu-west-1 — the state sits in the "
            "emb-tfstate bucket and the lock in emb-tf-locks.",
            0.70,
            "merge",
        ),
        ("The worker fleet runs on AWS.", "The worker fleet runs on GCP.", 0.9, None),
        # a suffix written alone and by a placeholder; a program in the current folder by its name
        (
            "Catch2 测试统一放在 tests/<模块>/ 下，文件名以 _test.cpp 结尾，每个 TEST_CASE 必须带模块 tag，例如 [ecs]。",
            "新写单元测试：放到 tests 里对应模块的目录，命名 xxx_test.cpp，TEST_CASE 都要加上 [模块名] 标签。",
            0.71,
            "merge",
        ),
        (
            "Run a single test class: ./mvnw -pl claims-service test -Dtest=ClaimIntakeResourceTest",
            "Fast test loop: scope mvnw with -pl claims-service and -Dtest=ClaimIntakeResourceTest; the full "
            "reactor build takes ~9 min.",
            0.67,
            "merge",
        ),
        # "just" restricts as "only" does: neither text adds the restriction
        (
            "pytest -x -k idempotency runs only the idempotency-key tests; useful when touching api/middleware/idempotency.py.",
            "To iterate quickly on api/middleware/idempotency.py, run just that slice of the suite with pytest -x -k idempotency.",
            0.77,
            "merge",
        ),
        # "torch" is PyTorch's other name, not another tool
        (
            "训练任务统一通过 SLURM 提交（sbatch scripts/train.sbatch），不要在 API 节点上直接跑 torch 训练。",
            "决定：所有 PyTorch 训练都走 SLURM 集群，用 scripts/train.sbatch 提交；API 那几台机器只负责推理调度，因为它们没有 A100。",
            0.80,
            "merge",
        ),
        # an identifier both name is their subject, in any script
        ("iOS の deploymentTarget は 15。", "deploymentTarget を 16 に変更（SwiftData を使うため）。", 0.6, "conflict"),
        # each restricts in its own language: no condition added, though the clauses cannot be compared
        (
            "Timestamps are stored in UTC; conversion to local time happens only in the reporting layer.",
            "Время храним в UTC; в локальное время переводим только в слое отчётов.",
            0.8,
            "merge",
        ),
        # across scripts no word is shared but the names: a name both write is the subject
        (
            "Cloud resources are defined with Pulumi under `infra/pulumi/`.",
            "Pulumi の構成は `infra/pulumi/` から `deploy/pulumi/` に移動した。",
            0.64,
            "conflict",
        ),
        (
            "Crash reports go through Bugsnag (bugsnag_flutter); the API key comes from `--dart-define`.",
            "Перешли с Bugsnag на Sentry: bugsnag_flutter удалён из pubspec.yaml.",
            0.62,
            "conflict",
        ),
        # a unit of measure names no subject: two rates of two things
        (
            "Match state snapshots are sent to clients at 10 Hz.",
            "对手的光标/悬停位置以 20 Hz 单独同步，不走状态快照。",
            0.65,
            None,
        ),
        ("Sensor readings are sampled at 100 Hz.", "传感器采样频率改为 200 Hz。", 0.65, "conflict"),
        # a requirement written as two negations negates nothing
        (
            "Every new service needs a health check before it ships.",
            "No service ships without a health check.",
            0.82,
            "merge",
        ),
        (
            "Every new service needs a health check before it ships.",
            "Services never ship a health check.",
            0.82,
            "conflict",
        ),
    ],
)
def test_the_pair_rules(older, newer, cosine, expected):
    assert relation(item(older, 1), item(newer, 40), cosine) == expected


def test_numbers_cut_out_of_a_name_that_ran_on_into_chinese_are_numbers():
    older = "Spark任务OOM的问题通过把spark.sql.shuffle.partitions从200调到800解决了（ETL-203）。"
    newer = "ETL-203：shuffle分区太少导致executor内存溢出，spark.sql.shuffle.partitions由200改成800后恢复正常。"
    assert reading(newer).kinds["number"] == {"200", "800", "203"}
    assert relation(item(older, 1, "bug_fix"), item(newer, 40, "bug_fix"), 0.82) == "merge"


def test_latin_words_paths_and_names_are_read_up_to_the_other_script():
    assert "structlog" in reading("Логи пишем в JSON через structlog.").names
    assert {"collect", "limit"} <= reading("Не вызывать .collect() на больших DataFrame, только .limit()").names
    assert "sq" not in reading("После изменения .sq файлов прогнать generateCommonMainDatabaseInterface").names
    assert reading("国际化使用next-intl，翻译文件放在messages/目录下。").compounds == {"next-intl"}
    assert reading("文案JSON都在messages/里").kinds == {"path": {"messages/"}}
    assert reading("路径是 gx/expectations/<表名>.json").kinds == {"path": {"gx/expectations/*.json"}}
    assert reading("前端/后端分开部署").kinds == {}  # two words with a slash: no path


def test_a_value_of_many_placeholders_is_compared_as_written():
    """Matching a dozen placeholders against a long value that does not fill them could take
    minutes (backtracking): past two placeholders the value is compared as written."""
    older = "Generated files go to out/" + "xxx-a-" * 12 + "b.txt"
    newer = "Generated files go to out/" + "a-" * 80 + "c.txt"
    assert relation(item(older, 1), item(newer, 40), 0.9) == "conflict"


def test_a_tool_by_its_other_name_is_not_introduced():
    older = reading("Models train with torch on the GPU nodes.")
    assert not introduced(older, reading("Models now train with PyTorch on the GPU nodes."))
    assert introduced(older, reading("Models now train with JAX on the GPU nodes."))


def test_a_file_name_is_not_echoed_by_its_extension():
    assert echoed("shop.repo", reading("Never call Repo from a controller"))
    assert not echoed("config.yaml", reading("Settings are YAML: see the yaml folder"))


def test_a_literal_is_echoed_only_as_a_whole_name_or_number():
    def other(text):
        return reading(text)

    assert echoed("@tanstack/react-query", other("Server state lives in TanStack React Query."))
    assert echoed("react-native-mmkv", other("Storage is React Native MMKV."))
    assert not echoed("react-native-mmkv", other("Storage is React Native's AsyncStorage, not MMKV."))
    assert not echoed("config.yaml", other("The config is YAML."))

    assert echoed("mkdocs build", other("After mkdocs build, run the checker."))
    assert echoed("lightningmodule.__init__", other("在 LightningModule 的 __init__ 中调用 .cuda() 会出错"))
    assert echoed("p50/p99/p99.9", other("Report p50, p99 and p99.9 in ns."))
    assert echoed("orders.services", other("Use transition_order (orders/services.py)."))
    assert echoed("orders/services.py", other("Call transition_order() from orders.services."))
    assert not echoed("orders.services", other("Views live in orders/views.py."))
    assert not echoed("lightningmodule.__init__", other("LightningModule.setup runs on every rank"))
    assert echoed("release.yml", other("See .github/workflows/release.yml."))
    assert echoed("tests/compose.yml", other("Run `docker compose -f tests/compose.yml up`."))
    assert not echoed("80", other("The proxy listens on 8080."))
    assert not echoed("3.11", other("Pinned to Python 3.11.2."))
    assert not echoed("app", other("Deploy app-server first; app/api is next."))
    assert not echoed("cross", other("Binaries are cross-compiled with cargo-zigbuild."))


def test_lengths_of_time_are_read_in_seconds_in_every_unit_and_language():
    assert durations("ttl 300 seconds, ackwait 2m, a 2-minute wait, 1.5h") == {
        "300": {300.0},
        "2": {120.0},
        "2m": {120.0},
        "1.5": {5400.0},
        "1.5h": {5400.0},
    }
    assert durations("на 5 минут, 3 дня и 2 часа") == {"5": {300.0}, "3": {259200.0}, "2": {7200.0}}
    assert durations("缓存5分钟，超时300秒") == {"5": {300.0}, "300": {300.0}}
    assert durations("5 sets of 3 services, 10mb, 2x, 5 минимальных, 2 части") == {}


def test_numbers_with_their_units_are_values():
    assert unit_numbers("timeout 30s, 2x retries, 10MB bodies, 1.5h windows") == {"30s", "2x", "10mb", "1.5h"}
    assert unit_numbers("上限是10MB，超时30s") == {"10mb", "30s"}
    assert unit_numbers("Fixed the 502s and the 404s; k8s and v2 are names") == {"502", "404"}  # statuses


def test_events_merge_whatever_their_wording_and_never_conflict():
    fixed = item("Fixed the crash on cold start (MOB-311): R8 stripped a class", 1, "bug_fix")
    again = item("MOB-311: the app no longer crashes at launch; R8 stripped a class", 40, "bug_fix")
    assert relation(fixed, again, 0.85) == "merge"
    assert relation(item("Deploy to ECS", 1, "bug_fix"), item("Deploy to Vercel", 40, "bug_fix"), 0.9) is None


def test_a_record_of_what_happened_says_when_it_happened_not_where_it_holds():
    fixed = item(
        "Fixed the disk filling up in `media/resize.py`: temp files were never removed when the client "
        "disconnected mid-upload. Added `finally: os.remove(tmp)`.",
        1,
        "bug_fix",
    )
    again = item(
        "Disk filling up: leftover temp files after a dropped upload. Fixed by a finally block calling "
        "os.remove(tmp) in media/resize.py.",
        40,
        "bug_fix",
    )
    assert relation(fixed, again, 0.75) == "merge"


def _grouped(judged_kinds: dict, texts: list[str]) -> list[tuple[str, ...]]:
    """meaning_merges over the given pair kinds: (i, j) → kind, cosine 0.9 − 0.01·(i + j)."""
    items = [item(text, day + 1) for day, text in enumerate(texts)]
    vectors = {m.id: np.eye(8, dtype=np.float32)[0] for m in items}
    judged = [(0.9 - 0.01 * (i + j), items[i], items[j], kind, None) for (i, j), kind in judged_kinds.items()]
    judged.sort(key=lambda j: -j[0])
    return [m.ids for m in meaning_merges(judged, "decision", vectors)]


def test_a_memory_joins_a_merge_with_half_of_its_members_and_no_conflict():
    texts = [
        "Money is stored as integer cents in BIGINT columns; never floats.",
        "Store amounts as whole cents (BIGINT), no floating point for currency.",
        "Never put currency into floats: integer cents in bigint columns.",
    ]
    assert _grouped({(0, 1): "merge", (0, 2): "merge"}, texts) == [("m1", "m2", "m3")]
    assert _grouped({(0, 1): "merge", (0, 2): "merge", (1, 2): "conflict"}, texts) == [("m1", "m2")]
    fourth = "Currency amounts: integer cents in BIGINT, floats are banned."
    half = {(0, 1): "merge", (0, 2): "merge", (1, 2): "merge", (0, 3): "merge"}
    assert _grouped(half, [*texts, fourth]) == [("m1", "m2", "m3")]  # one merge of three pairs: not half
    assert _grouped({**half, (1, 3): "merge"}, [*texts, fourth]) == [("m1", "m2", "m3", "m4")]


def test_a_memory_joins_by_half_only_when_one_text_keeps_every_literal():
    texts = [
        "Payments retry through the job queue `payments_retry`.",
        "Failed payments are retried from the payments_retry queue.",
        "Retries of failed payments go through a queue (see docs/queues.md).",
    ]
    assert _grouped({(0, 1): "merge", (0, 2): "merge"}, texts) == [("m1", "m2")]


def _random_unit(n: int, dims: int = 32, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n // 4, dims))
    rows = np.repeat(base, 4, axis=0)[:n] + rng.normal(scale=0.25, size=(n, dims))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_neighbours_are_exact_for_small_groups_and_near_exact_above():
    small = _random_unit(400)
    sims = small @ small.T
    exact = {(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(sims >= 0.9, k=1)))}
    found = {(i, j) for i, j, _ in neighbours.similar_vector_pairs(small, 0.9, max_neighbours=400)}
    assert found == exact
    large = _random_unit(6000)
    assert len(large) > neighbours.EXACT_LIMIT
    pairs = neighbours.similar_vector_pairs(large, 0.9, max_neighbours=3)
    approximate = {(i, j) for i, j, _ in pairs}
    best = large @ large.T
    np.fill_diagonal(best, -1)
    closest, score = best.argmax(axis=1), best.max(axis=1)
    nearest = {tuple(sorted((i, int(closest[i])))) for i in np.flatnonzero(score >= 0.9).tolist()}
    assert len(nearest & approximate) >= 0.97 * len(nearest)
    assert neighbours.similar_vector_pairs(large, 0.9, 3) == pairs  # the same answer every time


def _counted(store) -> dict:
    """The per-(user, model) counts the triggers keep, beside the rows counted."""
    kept = {(u, m): n for u, m, n in store._query("SELECT user_id, model, n FROM vector_counts") if n}
    rows = {(u, m): n for u, m, n in store._query("SELECT user_id, model, count(*) FROM vectors GROUP BY 1, 2")}
    assert kept == rows
    return kept


@pytest.mark.parametrize("counted", [True, False])  # the count the triggers keep, or the rows counted
def test_the_vector_index_follows_writes_and_deletes(tmp_path, counted):
    store = open_store(f"sqlite:///{tmp_path}/v.sqlite3")
    index = VectorIndex("u", "m")

    def current():
        return index.current(store._query, counted=counted)

    with store.write() as writer:
        for i in range(3):
            writer.insert(
                Memory(
                    id=f"id{i}",
                    memory=f"text {i}",
                    user_id="u",
                    created_at="2026-01-01T00:00:00+00:00",
                    updated_at="2026-01-01T00:00:00+00:00",
                ),
                actor="t",
            )
        writer.store_vectors("u", "m", [(f"id{i}", f"text {i}", np.eye(4, dtype=np.float32)[i]) for i in range(3)])
    ids, matrix = current()
    assert ids == ["id0", "id1", "id2"] and matrix.shape == (3, 4)
    assert _counted(store) == {("u", "m"): 3}
    with store.write() as writer:
        writer.store_vectors("u", "m", [("id1", "text 1", np.eye(4, dtype=np.float32)[3])])
    ids, matrix = current()
    assert ids == ["id0", "id1", "id2"] and matrix[1, 3] == 1.0  # rewritten in place
    with store.write() as writer:
        writer.delete(writer.get("u", "id0"), "t")
    ids, matrix = current()
    assert sorted(ids) == ["id1", "id2"] and matrix.shape == (2, 4)
    assert _counted(store) == {("u", "m"): 2}
    with store.write() as writer:  # a re-worded memory loses its vector (trigger): counted too
        writer.change(writer.get("u", "id1"), "UPDATE", "t", memory="text one")
    assert _counted(store) == {("u", "m"): 1}
    assert current()[0] == ["id2"]
    assert matrix[ids.index("id1"), 3] == 1.0


@pytest.mark.parametrize("many", [False, True])  # by primary key, or one pass over the user's vectors
def test_vectors_of_gives_each_memory_the_vector_of_its_text(backend, store_url_of, monkeypatch, many):
    from mem0_plugin.store.rows import text_hash

    store = open_store(store_url_of(backend))
    if many:
        monkeypatch.setattr(store, "MANY_IDS", 0)
    with store.write() as writer:
        for i in range(3):
            stamp = "2026-01-01T00:00:00+00:00"
            writer.insert(
                Memory(id=f"id{i}", memory=f"text {i}", user_id="u", created_at=stamp, updated_at=stamp), actor="t"
            )
        writer.store_vectors("u", "m", [(f"id{i}", f"text {i}", np.eye(4, dtype=np.float32)[i]) for i in range(3)])
    ids = ["id0", "id1", "id2", "no-such-id"]
    read = {f"id{i}": text_hash(f"text {i}") for i in range(3)}
    assert sorted(store.vectors_of("u", "m", ids, read)) == ["id0", "id1", "id2"]
    assert store.vectors_of("u", "m", ids, read)["id1"][1] == 1.0
    assert sorted(store.vectors_of("u", "m", ids, {**read, "id2": text_hash("another text read")})) == ["id0", "id1"]
    with store.write() as writer:  # re-worded since: its vector is gone (trigger)
        writer.change(writer.get("u", "id0"), "UPDATE", "t", memory="text zero")
    assert sorted(store.vectors_of("u", "m", ids)) == ["id1", "id2"]
    assert sorted(store.vectors_of("u", "m", ids, read)) == ["id1", "id2"]
    assert store.vectors_of("u", "other-model", ids, read) == {}


@pytest.fixture
def semantic_env(mem0_home, monkeypatch, tmp_path):
    monkeypatch.delenv("MEM0_EMBEDDER")
    monkeypatch.chdir(tmp_path)
    return mem0_home


def _add(text: str, type_: str, created: str) -> None:
    record = {"memory": text, "metadata": {"type": type_}, "created_at": created}
    path = "records.json"
    with open(path, "w") as handle:
        json.dump([record], handle)
    assert memories_cli.main(["import", path]) == 0


def _add_a_duplicate_and_a_replaced_port() -> None:
    """Two decisions that say one thing, and a port the newer memory says changed ("now")."""
    _add(
        "All money is kept as integer cents in BIGINT amount_cents columns, never as floats or NUMERIC",
        "decision",
        "2026-05-01T10:00:00+00:00",
    )
    _add(
        "Store all monetary amounts as integer cents (BIGINT amount_cents columns); never floats or NUMERIC",
        "decision",
        "2026-10-01T10:00:00+00:00",
    )
    _add("Local Postgres from docker-compose listens on port 5432", "environmental", "2026-04-01T10:00:00+00:00")
    _add(
        "Local Postgres from docker-compose listens on port 5433 now (5432 clashes with Homebrew postgres)",
        "environmental",
        "2026-11-01T10:00:00+00:00",
    )


def test_plan_and_auto_by_meaning(semantic_env, capsys):
    _add_a_duplicate_and_a_replaced_port()
    capsys.readouterr()
    assert dream_cli.main(["--plan", "--json", "--now", "2026-11-30T00:00:00+00:00"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert [m["merged_text"] for m in plan["merges"]] == [
        "Store all monetary amounts as integer cents (BIGINT amount_cents columns); never floats or NUMERIC"
    ]
    assert plan["conflicts"] == []  # the newer text says "now": a supersede, which --auto may apply
    [supersede] = plan["supersedes"]
    assert supersede["text"] == (
        "Local Postgres from docker-compose listens on port 5433 now (5432 clashes with Homebrew postgres)"
    )
    assert supersede["reason"] == 'the newer text marks the change: "now"'
    store = open_store(f"sqlite:///{semantic_env}/memories.sqlite3")
    assert store.vector_counts("alice", STORED_MODEL) == (0, 4)  # --plan wrote nothing
    assert dream_cli.main(["--auto", "--now", "2026-11-30T00:00:00+00:00"]) == 0
    assert capsys.readouterr().out.strip() == (
        "[mem0-dream --auto] project=acme-api  merged=1  pruned=0  conflicts_skipped=0  superseded=1"
    )
    old = store.get("alice", supersede["old"])
    assert (old.lifecycle_state, old.replacement_memory_id) == ("superseded", supersede["new"])
    embedded, total = store.vector_counts("alice", STORED_MODEL)
    assert embedded >= 4 and total >= 5  # the sources and the merged memory exist
    merged = [m for m in store.page("alice", app_id="acme-api").results if m.source_memory_ids]
    model = STORED_MODEL
    assert len(merged) == 1 and list(store.vectors_of("alice", model, [merged[0].id])) == [merged[0].id]
    # (--auto stored the merged memory's vector: its source's, the draft being that text)


def test_an_acknowledgement_and_two_subjects_each_with_its_value_are_no_conflict(semantic_env, capsys):
    """As a user meets them: "Noted: you prefer tabs" repeats "I prefer tabs over spaces" (a
    merge keeping the statement), and two timeouts of two things are left alone."""
    for text, day in (
        ("I prefer tabs over spaces", 1),
        ("Noted: you prefer tabs", 2),
        ("The worker's timeout is 30 s", 3),
        ("The API's timeout is 60 s", 4),
    ):
        _add(text, "user_preference" if day < 3 else "environmental", f"2026-10-0{day}T10:00:00+00:00")
    capsys.readouterr()
    assert dream_cli.main(["--plan", "--json", "--now", "2026-11-30T00:00:00+00:00"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert [m["merged_text"] for m in plan["merges"]] == ["I prefer tabs over spaces"]
    assert plan["conflicts"] == [] and plan["supersedes"] == []


def test_a_failed_read_of_the_stored_vectors_stops_the_plan_with_the_store_error(semantic_env, capsys):
    """Dream reads the stored vectors on a thread while it prepares the memories
    (docs/dream.md, "Step 2: fetch"): a read that fails there ends the run with the store's
    error and exit code, as a read in the foreground does."""
    import sqlite3

    _add("Local Postgres listens on port 5432", "environmental", "2026-04-01T10:00:00+00:00")
    _add("Local Postgres listens on port 5433 now", "environmental", "2026-10-01T10:00:00+00:00")
    assert memories_cli.main(["embed"]) == 0  # (nothing left to embed: no other read of vectors comes first)
    with sqlite3.connect(semantic_env / "memories.sqlite3") as conn:  # another tool broke the table
        conn.execute("ALTER TABLE vectors RENAME COLUMN vector TO vector_gone")
    capsys.readouterr()
    assert dream_cli.main(["--plan", "--now", "2026-11-30T00:00:00+00:00"]) == 6
    assert capsys.readouterr().err == "mem0-dream: error: store read failed: no such column: v.vector\n"


def test_health_deep_finds_what_dream_finds_by_meaning_and_writes_nothing(semantic_env, capsys):
    from mem0_plugin.cli import health_cli

    _add_a_duplicate_and_a_replaced_port()
    capsys.readouterr()

    def data() -> dict[str, bytes]:  # the -shm is SQLite's shared-memory index, which readers touch too
        return {p.name: p.read_bytes() for p in sorted(semantic_env.iterdir()) if not p.name.endswith("-shm")}

    before = data()
    health_cli.main(["--deep", "--json", "--now", "2026-11-30T00:00:00+00:00"])
    quality = json.loads(capsys.readouterr().out)["quality"]
    assert data() == before  # the vectors it made were not stored
    with open_store(f"sqlite:///{semantic_env}/memories.sqlite3") as store:
        assert store.vector_counts("alice", STORED_MODEL) == (0, 4)
    assert quality["counts"]["duplicates"] == 1 and quality["counts"]["contradictions"] == 1
    assert dream_cli.main(["--plan", "--json", "--now", "2026-11-30T00:00:00+00:00"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert [d["ids"] for d in quality["duplicates"]] == [m["ids"] for m in plan["merges"]]
    assert [c["ids"] for c in quality["contradictions"]] == [[s["new"], s["old"]] for s in plan["supersedes"]]


def test_demo_with_the_model_shows_a_paraphrase_and_a_replaced_fact(semantic_env, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", open("/dev/null"))
    assert dream_cli.main(["--demo", "--now", "2026-11-30T00:00:00+00:00"]) == 0
    out = capsys.readouterr().out
    assert '→ "Store every order total as integer cents (BIGINT amount_cents columns); never floats or NUMERIC"' in out
    assert (
        ' — "Local Postgres from docker-compose listens on port 5433 now (5432 clashes with Homebrew postgres)"' in out
    )
    assert "Supersede (2):" in out  # with the API port's, which the words alone find (test_dream_cli)
    assert "Synthesize (1):" in out and "3 observations" in out  # the failing-test habit, by meaning too
    assert Semantic  # the real embedder was used: the lexical rules alone find neither (test_dream_cli)


def test_with_vectors_a_lexical_conflict_about_another_thing_is_dropped():
    # The lexical value rule reads two values of one setting in the same sentence about two
    # keys; with vectors, the meaning rules see the subject swapped and drop it.
    from mem0_plugin.dream.per_type import type_actions

    items = [
        item("SEGMENT_WRITE_KEY is injected per flavor by react-native-config.", 1, "environmental"),
        item("MAPS_API_KEY is injected per flavor by react-native-config.", 40, "environmental"),
    ]
    assert len(type_actions("environmental", items, {}, {}).conflicts) == 1  # (v1, no vectors)
    first = np.zeros(384, dtype=np.float32)
    second = np.zeros(384, dtype=np.float32)
    first[0], second[0], second[1] = 1.0, 0.7, 0.71414284  # cosine 0.70
    vectors = {items[0].id: first, items[1].id: second}
    assert type_actions("environmental", items, vectors, {}).conflicts == []


def test_with_vectors_a_tool_chosen_anew_stays_a_lexical_conflict():
    # Below every cosine floor of the meaning rules, "Deploy to ECS" / "Deploy to Vercel" is
    # still the v1 value rule's conflict (one choice made twice), not two things.
    from mem0_plugin.dream.per_type import type_actions

    items = [item("Deploy the storefront to ECS", 1), item("Deploy the storefront to Vercel", 40)]
    first = np.zeros(384, dtype=np.float32)
    second = np.zeros(384, dtype=np.float32)
    first[0], second[0], second[1] = 1.0, 0.56, 0.82849261  # cosine 0.56, as the default model gives
    vectors = {items[0].id: first, items[1].id: second}
    assert [c.ids for c in type_actions("decision", items, vectors, {}).conflicts] == [(items[1].id, items[0].id)]


def test_a_program_named_as_a_thing_is_no_command():
    assert command_swapped(reading("Run `make seed` first."), reading("Run `make seed-fx` first."))
    assert command_swapped(reading("Команда make seed заполняет базу."), reading("Команда make seed-fx грузит курсы."))
    assert not command_swapped(
        reading("The ITs fail unless the docker daemon is up."), reading("Start Docker Desktop before the ITs.")
    )
    assert not command_swapped(reading("`make test` runs the suite."), reading("Run make test before pushing."))
    assert not command_swapped(reading("Go modules are vendored."), reading("Go dependencies are vendored."))


def test_an_exception_is_never_a_requirement_said_again():
    older = item("User prefers table-driven tests in Go except for fuzz tests.", 1, "user_preference")
    newer = item("User needs table-driven tests in Go, fuzz tests included.", 40, "user_preference")
    assert relation(older, newer, 0.9) is None


def test_with_vectors_a_lexical_conflict_between_two_commands_is_dropped():
    # One program run with two tasks is two commands (docs/dream.md, "What the pair is"): the
    # lexical value rule reads one setting with two values, the meaning rules two things.
    from mem0_plugin.dream.per_type import type_actions

    items = [
        item("Regenerate the fixtures with `make fixtures-orders`.", 1, "task_learning"),
        item("Regenerate the fixtures with `make fixtures-invoices`.", 40, "task_learning"),
    ]
    assert len(type_actions("task_learning", items, {}, {}).conflicts) == 1  # (v1, no vectors)
    first, second = np.zeros(384, dtype=np.float32), np.zeros(384, dtype=np.float32)
    first[0], second[0], second[1] = 1.0, 0.7, 0.71414284  # cosine 0.70
    vectors = {items[0].id: first, items[1].id: second}
    actions = type_actions("task_learning", items, vectors, {})
    assert actions.conflicts == [] and actions.merges == []


def test_every_platform_word_is_read():
    from mem0_plugin.language.reading import platforms

    assert platforms("the ipados build ships a split view") == {"ios", "mobile"}
    assert platforms("web checkout and the mobile apps") == {"web", "mobile"}
    assert platforms("`ios/Podfile` pins the pods") == frozenset()  # a path is no platform


PROHIBITIONS = [
    "We prefer Postgres over MySQL for the ledger",
    "Chose Vitest over Jest",
    "Use pnpm rather than npm",
    "Call the helper instead",
    "Raw SQL in handlers is forbidden",
    "Moment.js is banned",
    "Floats for money are prohibited",
    "Force pushes are disallowed on main",
    "Global state is discouraged",
    "DynamoDB was rejected for the ledger",
    "Kafka is ruled out",
    "Direct DB writes are not allowed",
    "Handlers must not block",
    "Tests should not hit the network",
    "The team avoids ORMs",
    "Feature flags are off-limits in the core",
    "Singletons are an anti-pattern here",
    "Mocking the store is a bad idea",
    "Telemetry is turned off",
    "Keep the cache off in tests",
    "We turn off Crashlytics in the dev flavor",
]


@pytest.mark.parametrize("text", PROHIBITIONS)
def test_every_english_prohibition_passes_its_quick_look(text):
    """`says_no` looks for one of a few words (`_PROHIBITION_HINT`) before running the
    prohibition pattern: each kind of prohibition the pattern reads holds one of them."""
    from mem0_plugin.language import negation

    lowered = text.lower()
    assert negation._PROHIBITION_ASCII.search(lowered), text
    assert negation._PROHIBITION_HINT.search(lowered), text
    assert reading(text).negated, text


def test_the_quick_looks_miss_nothing_the_patterns_find_on_the_labelled_set():
    """Every quick look before a pattern (prohibitions, environments, unit numbers, switches)
    passes wherever the pattern itself finds something, on every text of the labelled set."""
    from pathlib import Path

    from mem0_plugin.language import literal_kinds, negation
    from mem0_plugin.language import reading as reading_module

    data = json.loads((Path(__file__).parent / "data" / "dev_set.json").read_text(encoding="utf-8"))
    for memory in data["memories"]:
        lowered = memory["text"].lower()
        if negation._PROHIBITION_ASCII.search(lowered):
            assert negation._PROHIBITION_HINT.search(lowered), memory["key"]
        if literal_kinds._UNIT_NUMBER.search(memory["text"]):
            assert literal_kinds._DIGIT_AND_LETTER.search(memory["text"]), memory["key"]
        if reading_module._ASSIGNED_SWITCH.search(memory["text"]):
            assert reading_module._SWITCH_VALUE.search(memory["text"]), memory["key"]


def test_a_version_with_letters_is_read_whole():
    """The stored features cut "2022.3.21f1" to "2022.3"; the pair rules read the whole version,
    and keep a version also written whole beside it."""
    assert reading("Editor is 2022.3.21f1.").kinds["version"] == {"2022.3.21f1"}
    assert reading("Python 3.13.0rc1 and v2.1b3").kinds["version"] == {"3.13.0rc1", "v2.1b3"}
    assert reading("Upgraded Python from 3.13.0rc1 to 3.13.0").kinds["version"] == {"3.13.0rc1", "3.13.0"}
    assert "version" not in reading("Timeouts are 30s and pods get 512Mi").kinds


def test_an_unmarked_value_replaced_is_a_conflict_from_its_own_threshold():
    older, newer = "Product listing page size is 24 items.", "PLP pagination: 36 products per page."
    assert relation(item(older, 1), item(newer, 40), 0.65) == "conflict"  # (below merging, above 0.64)
    assert relation(item(older, 1), item(newer, 40), 0.62) is None
    # two memories each other's closest: from the floor where pairs are compared
    assert relation(item(older, 1), item(newer, 40), 0.55, nearest=True) == "conflict"
    assert relation(item(older, 1), item(newer, 40), 0.48, nearest=True) is None
    versions = ("Tailwind is pinned to 3.4.", "We build styles with Tailwind v4.1.")  # a version: from 0.60
    assert relation(item(versions[0], 1), item(versions[1], 40), 0.61) == "conflict"
    assert relation(item(versions[0], 1), item(versions[1], 40), 0.59) is None


def _unit(*weights: float) -> np.ndarray:
    vector = np.array([*weights, 0.0, 0.0, 0.0][:4], dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_replaced_value_at_a_low_cosine_is_a_conflict_only_between_two_closest_memories():
    from mem0_plugin.dream.relations import judged_pairs
    from mem0_plugin.relation.pair_memo import PairMemo

    older = item("Product listing page size is 24 items.", 1)
    newer = item("PLP pagination: 36 products per page.", 40)
    closer = item("Search results show 48 hits per page.", 41)
    vectors = {older.id: _unit(1, 0), newer.id: _unit(0.55, 0.835)}  # cosine 0.55, each other's closest
    kinds = {(o.id, n.id): kind for _, o, n, kind, _ in judged_pairs([older, newer], vectors, PairMemo())}
    assert kinds == {(older.id, newer.id): "conflict"}
    # a third memory closer to the newer one: the pair is no longer each other's closest
    vectors[closer.id] = _unit(0.3, 0.95)
    kinds = {(o.id, n.id): kind for _, o, n, kind, _ in judged_pairs([older, newer, closer], vectors, PairMemo())}
    assert kinds.get((older.id, newer.id)) is None


def _two_apart(cosine: float) -> tuple[np.ndarray, np.ndarray]:
    return _unit(1, 0), _unit(cosine, (1 - cosine**2) ** 0.5)


def test_a_replaced_value_named_by_a_far_newer_text_is_found_by_the_value():
    from mem0_plugin.dream.per_type import type_actions
    from mem0_plugin.relation.retired_values import retired_pairs

    older = item("FastAPI dev server runs on port 8000: `uv run uvicorn tundra.api:app --port 8000`.", 1)
    newer = item("The local API now listens on 8080: 8000 clashed with the JupyterHub proxy on the dev box.", 40)
    first, second = _two_apart(0.32)
    vectors = {older.id: first, newer.id: second}
    assert [(o.id, n.id) for o, n in retired_pairs([older, newer], vectors, {})] == [(older.id, newer.id)]
    found = type_actions("decision", [older, newer], vectors, {})
    assert [c.ids for c in found.conflicts] == [(newer.id, older.id)]  # the newer first: the likely winner

    # too far apart, or events, or no change marked, or a one-digit value: nothing
    assert retired_pairs([older, newer], dict(zip(vectors, _two_apart(0.25))), {}) == []
    assert (
        retired_pairs([item(older.memory.memory, 1, "bug_fix"), item(newer.memory.memory, 40, "bug_fix")], vectors, {})
        == []
    )
    unmarked = item("The local API listens on 8080; 8000 belongs to the JupyterHub proxy on the dev box.", 40)
    assert retired_pairs([older, unmarked], {older.id: first, unmarked.id: second}, {}) == []
    swappiness = item("group_vars/db.yml sets vm.swappiness=1 for the database hosts.", 1)
    grafana = item("Grafana on mon-1 now serves on port 3300; 3000 is taken by the Loki gateway.", 40)
    assert retired_pairs([swappiness, grafana], {swappiness.id: first, grafana.id: second}, {}) == []
    # the older text must be older
    assert (
        retired_pairs([item(newer.memory.memory, 1), item(older.memory.memory, 40)], {"m1": first, "m40": second}, {})
        == []
    )


def test_looking_up_replaced_values_stays_bounded_on_a_store_of_lists_and_common_values():
    import time

    from mem0_plugin.relation.retired_values import retired_pairs

    rng = np.random.default_rng(5)
    texts = [f"Service {i} now listens on 8080; 8000 and 9000 were taken by others." for i in range(3000)]
    texts += [f"Host {i} now serves ports {' '.join(str(7000 + j) for j in range(40))}." for i in range(500)]
    items = [item(text, day) for day, text in enumerate(texts)]
    vectors = {m.id: v / np.linalg.norm(v) for m, v in zip(items, rng.normal(size=(len(items), 8)).astype(np.float32))}
    started = time.perf_counter()
    retired_pairs(items, vectors, {})
    assert time.perf_counter() - started < 3  # (a value held by 3,000 memories names nothing: skipped)


def test_a_long_text_is_read_for_spelled_names_without_being_cached():
    from mem0_plugin.relation import literals

    long_text = "Filler words go here. " * 200 + "State lives in TanStack React Query."
    before = literals._cached_run.cache_info().currsize
    assert echoed("@tanstack/react-query", reading(long_text))
    assert len(long_text) > literals.CACHED_TEXT_CHARS and literals._cached_run.cache_info().currsize == before


def test_a_long_text_is_read_each_time_and_a_short_one_once():
    from mem0_plugin.language import reading as reading_module

    short, long = "Use pnpm.", "Use pnpm. " + "More words here. " * 200
    assert reading(short) is reading(short)
    assert reading(long) is not reading(long) and reading(long).text == long
    assert len(long) > reading_module.CACHED_TEXT_CHARS >= len(short)
