// Package catalog is the benchmarks' family of 10,000 capabilities with words a search can tell
// apart: 40 services, 25 kinds of record and 10 actions, each tool named
// <service>_<action>_<record> and described in other words than its name (the way real servers
// describe their tools), with argument names of its own. slowprovider serves it (-catalog), and
// the search-quality test (bench/search_quality_test.go) ranks testdata/search/queries.json
// over it. It is deterministic: the same tools in the same order on every run.
//
// Layer: a leaf of bench/; it imports nothing of ours.
package catalog

import "strings"

// Tool is one tool of the catalog, as a provider lists it.
type Tool struct {
	Name        string
	Description string
	Args        []Arg
	Required    []string
}

// Arg is one property of a tool's inputSchema.
type Arg struct {
	Name, Type, Description string
}

type service struct{ name, phrase string }
type record struct{ name, phrase, key string }
type action struct {
	name, verb, tail string
	args             func(r record) []Arg
}

var services = []service{
	{"github", "the git code hosting platform where repositories live"},
	{"gitlab", "the self-managed DevOps forge with merge pipelines"},
	{"jira", "the Atlassian agile tracker used for sprints and backlogs"},
	{"linear", "the keyboard-first product planning tool for engineering squads"},
	{"slack", "the team chat workspace with channels and threads"},
	{"discord", "the community voice and text server for gamers"},
	{"teams", "Microsoft's corporate messaging and meetings suite"},
	{"zoom", "the video conferencing service for calls and webinars"},
	{"gmail", "Google's electronic mail inbox"},
	{"outlook", "Microsoft's mail and calendar client for enterprises"},
	{"salesforce", "the CRM holding leads, opportunities and pipelines of the sales force"},
	{"hubspot", "the inbound marketing automation hub"},
	{"stripe", "the online card payments processor"},
	{"paypal", "the consumer wallet for money transfers"},
	{"quickbooks", "the small-business bookkeeping and accounting ledger"},
	{"xero", "the cloud accountancy software for bookkeepers in New Zealand and beyond"},
	{"shopify", "the e-commerce storefront builder for merchants"},
	{"zendesk", "the customer support helpdesk with agent queues"},
	{"intercom", "the in-app live messenger for customer conversations"},
	{"notion", "the all-in-one wiki and notes workspace"},
	{"confluence", "the enterprise knowledge base of pages and spaces"},
	{"gdrive", "Google's cloud file storage and sharing"},
	{"dropbox", "the synced folder backup service"},
	{"s3", "Amazon's object storage buckets"},
	{"postgres", "the relational SQL database server"},
	{"mongo", "the document-oriented NoSQL datastore"},
	{"redis", "the in-memory key-value cache"},
	{"kubernetes", "the container orchestration cluster with pods and deployments"},
	{"docker", "the container image registry and runtime"},
	{"terraform", "the infrastructure-as-code provisioning engine"},
	{"datadog", "the observability platform for metrics, traces and dashboards"},
	{"pagerduty", "the on-call incident alerting and escalation rota"},
	{"sentry", "the crash and exception monitoring service"},
	{"figma", "the collaborative interface design canvas"},
	{"calendly", "the meeting scheduling links service"},
	{"twilio", "the SMS text messaging and telephony API"},
	{"airtable", "the spreadsheet-database hybrid with bases and views"},
	{"asana", "the work management board for marketing departments"},
	{"workday", "the human resources and payroll system for employees"},
	{"okta", "the single sign-on identity provider"},
}

var records = []record{
	{"ticket", "work item or bug report", "ticket_ref"},
	{"invoice", "bill sent to a client for payment", "invoice_number"},
	{"user", "member account of a person", "login"},
	{"message", "chat post or note written to someone", "message_ref"},
	{"file", "uploaded document or attachment", "path"},
	{"comment", "remark left in a discussion", "comment_ref"},
	{"report", "generated analytics summary with charts", "report_ref"},
	{"webhook", "HTTP callback endpoint subscription", "endpoint_url"},
	{"secret", "credential such as an API key or password", "secret_name"},
	{"label", "colored tag used to categorise things", "label_text"},
	{"project", "initiative grouping related work", "project_key"},
	{"team", "group of colleagues with shared permissions", "team_slug"},
	{"event", "calendar appointment with attendees", "event_ref"},
	{"order", "purchase placed by a shopper", "order_number"},
	{"customer", "buyer or client profile", "customer_ref"},
	{"contract", "signed legal agreement", "contract_ref"},
	{"alert", "monitoring notification about a threshold breach", "alert_ref"},
	{"backup", "point-in-time snapshot for disaster recovery", "snapshot_ref"},
	{"role", "set of access rights granted to members", "role_name"},
	{"template", "reusable boilerplate layout", "template_ref"},
	{"subscription", "recurring plan billed every month or year", "plan_ref"},
	{"refund", "money returned to a buyer after a dispute", "refund_ref"},
	{"dashboard", "board of live charts and widgets", "dashboard_ref"},
	{"schedule", "recurring cron timetable for jobs", "cron_expression"},
	{"workflow", "automated multi-step pipeline of triggers and steps", "workflow_ref"},
}

func keyArg(r record) Arg {
	return Arg{r.key, "string", "which " + r.phrase}
}

var actions = []action{
	{"create", "Opens a brand-new", "with the given fields", func(r record) []Arg {
		return []Arg{{"fields", "object", "initial field values"}, {"dry_run", "boolean", "validate without saving"}}
	}},
	{"get", "Fetches a single", "by its reference, with all its details", func(r record) []Arg {
		return []Arg{keyArg(r), {"expand", "array", "related objects to embed"}}
	}},
	{"list", "Enumerates every", "page by page, newest first", func(r record) []Arg {
		return []Arg{{"page_size", "integer", "items per page"}, {"page_token", "string", "where the previous page ended"}}
	}},
	{"update", "Edits and saves changes to an existing", "leaving unmentioned fields untouched", func(r record) []Arg {
		return []Arg{keyArg(r), {"changes", "object", "field values to overwrite"}}
	}},
	{"delete", "Permanently erases a", "; this cannot be undone", func(r record) []Arg {
		return []Arg{keyArg(r), {"force", "boolean", "skip the confirmation"}}
	}},
	{"search", "Finds each", "whose text matches a free-form query", func(r record) []Arg {
		return []Arg{{"q", "string", "words to look for"}, {"max_hits", "integer", "bound on results"}}
	}},
	{"archive", "Retires into cold storage a", "so it no longer shows by default", func(r record) []Arg {
		return []Arg{keyArg(r), {"reason", "string", "why it is retired"}}
	}},
	{"export", "Downloads as a CSV spreadsheet all of the", "matching a filter", func(r record) []Arg {
		return []Arg{{"filter", "string", "which ones to include"}, {"columns", "array", "columns of the spreadsheet"}}
	}},
	{"share", "Grants another person access to a", "by sending them an invitation", func(r record) []Arg {
		return []Arg{keyArg(r), {"invitee", "string", "email of the person invited"}, {"permission", "string", "viewer or editor"}}
	}},
	{"count", "Tallies how many of each", "exist, grouped by status", func(r record) []Arg {
		return []Arg{{"group_by", "string", "field to group the tally by"}, {"since", "string", "only those created after this date"}}
	}},
}

// Size is the number of tools Tools returns: every service, record and action but the last
// combination, leaving room for the benchmark provider's echo tool in a family of 10,000.
const Size = 40*25*10 - 1

// Tools returns the catalog in its fixed order (service, then record, then action).
func Tools() []Tool {
	out := make([]Tool, 0, Size)
	for _, s := range services {
		for _, r := range records {
			for _, a := range actions {
				if len(out) == Size {
					return out
				}
				var d strings.Builder
				d.WriteString(a.verb)
				d.WriteByte(' ')
				d.WriteString(r.phrase)
				d.WriteString(" in ")
				d.WriteString(s.phrase)
				if a.tail[0] != ';' {
					d.WriteByte(' ')
				}
				d.WriteString(a.tail)
				d.WriteString(".\nReturns JSON.")
				args := a.args(r)
				out = append(out, Tool{
					Name:        s.name + "_" + a.name + "_" + r.name,
					Description: d.String(),
					Args:        args,
					Required:    []string{args[0].Name},
				})
			}
		}
	}
	return out
}
