package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The warm-turn rows (issue 17): a turn's -c processes share the providers its keeper runs.

// slowStartMS is how long the warm-turn case's provider takes to start (a Node or Python
// server's start, SPEC 12).
const slowStartMS = 300

// endTurn ends h's current turn (its keeper, if one runs), untimed.
func (h *home) endTurn() error {
	_, err := h.w.run(context.Background(), spec{argv: []string{h.w.spear, "--end-turn"}, env: h.env})
	if err != nil {
		return fmt.Errorf("end turn: %w", err)
	}
	return nil
}

// keeperHome is a home whose turns keep their providers (keep_providers 300).
func (w *world) keeperHome(name string, provs []provider) (*home, error) {
	h, err := w.newHome(name, provs, "none")
	if err != nil {
		return nil, err
	}
	h.keep = 300
	return h, h.newTurn()
}

func caseWarmTurn(ctx context.Context, w *world) []row {
	const (
		tenName, tenTarget     = "ten -c invokes in one turn, provider starting in 0.3 s, vs one cold -c invoke", "ratio <= 1.50"
		firstName, firstTarget = "first -c invoke of a turn (0.3 s provider): with the keeper vs keep_providers 0", "ratio <= 1.10"
		warmName, warmTarget   = "warm -c invoke (keeper running) vs a bare Go process start + a go-sdk warm call", "reported"
	)
	provs := []provider{{id: "bench", initMS: slowStartMS, tools: 1}}
	warm, err := w.keeperHome("warm-turn", provs)
	if err != nil {
		return []row{failed(tenName, tenTarget, err), failed(firstName, firstTarget, err), failed(warmName, warmTarget, err)}
	}
	defer warm.endTurn()
	cold, err := w.newHome("cold-turn", provs, "none")
	if err != nil {
		return []row{failed(tenName, tenTarget, err), failed(firstName, firstTarget, err), failed(warmName, warmTarget, err)}
	}
	invoke := func(h *home, msg string) spec {
		return spec{argv: []string{w.spear, "-c", invokeLine("bench/echo", msg)}, env: h.env}
	}
	coldOne := timed(w, inTurn(cold, invoke(cold, "hi")), contains("hi"))

	// Ten -c processes of one new turn, timed together (the turn's end is not).
	ten := func(ctx context.Context) (float64, error) {
		if err := warm.newTurn(); err != nil {
			return 0, err
		}
		total := 0.0
		for i := range 10 {
			msg := "hi " + strconv.Itoa(i)
			v, err := timed(w, fixed(invoke(warm, msg)), contains(msg))(ctx)
			if err != nil {
				return 0, err
			}
			total += v
		}
		return total, nil
	}
	got, err := alternate(ctx, w.runs(9), ten, coldOne)
	rows := []row{judged(tenName, tenTarget, got, err, 1.50)}

	got, err = alternate(ctx, w.runs(15), timed(w, inTurn(warm, invoke(warm, "hi")), contains("hi")), coldOne)
	rows = append(rows, judged(firstName, firstTarget, got, err, 1.10))

	// A warm invoke: the turn's keeper runs the provider already.
	if err := warm.newTurn(); err != nil {
		return append(rows, failed(warmName, warmTarget, err))
	}
	if _, err := w.run(ctx, invoke(warm, "hi")); err != nil {
		return append(rows, failed(warmName, warmTarget, err))
	}
	floor := func(ctx context.Context) (float64, error) {
		start, err := w.run(ctx, spec{argv: []string{w.tool("gostart")}})
		if err != nil {
			return 0, err
		}
		call, err := warmCallMS(ctx, w, "sdkclient", 101)
		if err != nil {
			return 0, err
		}
		return ms(start.elapsed) + call, nil
	}
	got, err = alternate(ctx, w.runs(30), timed(w, fixed(invoke(warm, "hi")), contains("hi")), floor)
	return append(rows, judged(warmName, warmTarget, got, err, 0))
}

// warmCallMS is one warm call of client, in ms: the mean of the calls after the first on one
// session, which the client times itself (start-up is out); the last call's answer is checked.
func warmCallMS(ctx context.Context, w *world, client string, calls int) (float64, error) {
	o, err := w.run(ctx, clientSpec(w, client, calls, true))
	if err != nil {
		return 0, err
	}
	if err := contains(fmt.Sprintf("hi %d\n", calls-1))(o); err != nil {
		return 0, err
	}
	for _, line := range strings.Split(o.stderr.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "warm-calls-ns "); ok {
			if ns, err := strconv.ParseInt(v, 10, 64); err == nil && ns > 0 {
				return float64(ns) / 1e6 / float64(calls-1), nil
			}
		}
	}
	return 0, fmt.Errorf("%s reported no warm-calls-ns: %q", client, lastLines(o.stderr.String(), 2))
}
