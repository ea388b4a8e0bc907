package agentflow

import (
	"context"
	"fmt"
	"sync"
)

// eval is the value of x in s.
func (r *run) eval(ctx context.Context, x Expr, s *env) (any, error) {
	switch x := x.(type) {
	case *Ident:
		v, ok := s.get(x.Name)
		if !ok {
			return nil, &RunError{Pos: x.Pos(), Message: "unknown variable " + x.Name}
		}
		return v, nil
	case *StringLit:
		return x.Value, nil
	case *NumberLit:
		return x.Value, nil
	case *DurationLit:
		return float64(x.Millis), nil
	case *BoolLit:
		return x.Value, nil
	case *NullLit:
		return nil, nil
	case *ParenExpr:
		return r.eval(ctx, x.X, s)
	case *ArrayLit:
		out := make([]any, len(x.Elems))
		for i, e := range x.Elems {
			v, err := r.eval(ctx, e, s)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *ObjectLit:
		out := make(map[string]any, len(x.Fields))
		for _, f := range x.Fields {
			var fx Expr = f.Value
			if fx == nil {
				fx = f.Name
			}
			v, err := r.eval(ctx, fx, s)
			if err != nil {
				return nil, err
			}
			out[f.Name.Name] = v
		}
		return out, nil
	case *UnaryExpr:
		b, err := r.cond(ctx, x.X, s, "not")
		return !b, err
	case *BinaryExpr:
		return r.binary(ctx, x, s)
	case *MemberExpr:
		return r.member(ctx, x, s)
	case *CallExpr:
		return r.call(ctx, x, s)
	case *AgentExpr:
		return r.agent(ctx, x, s)
	case *ParallelExpr:
		return r.parallel(ctx, x, s)
	case *ParallelMapExpr:
		return r.parallelMap(ctx, x, s)
	case *VerifyExpr:
		return r.verify(ctx, x, s)
	}
	return nil, &RunError{Pos: x.Pos(), Message: fmt.Sprintf("%T is not evaluated", x)}
}

func (r *run) binary(ctx context.Context, x *BinaryExpr, s *env) (any, error) {
	switch x.Op {
	case "??":
		v, err := r.eval(ctx, x.X, s)
		if err != nil || v != nil {
			return v, err
		}
		return r.eval(ctx, x.Y, s)
	case "and", "or":
		a, err := r.cond(ctx, x.X, s, x.Op)
		if err != nil {
			return nil, err
		}
		if a == (x.Op == "or") {
			return a, nil
		}
		return r.cond(ctx, x.Y, s, x.Op)
	case "in":
		rg := x.Y.(*RangeExpr)
		v, err := r.number(ctx, x.X, s, "in")
		if err != nil {
			return nil, err
		}
		lo, err := r.number(ctx, rg.Lo, s, "..")
		if err != nil {
			return nil, err
		}
		hi, err := r.number(ctx, rg.Hi, s, "..")
		if err != nil {
			return nil, err
		}
		return v >= lo && v <= hi, nil
	}
	a, err := r.eval(ctx, x.X, s)
	if err != nil {
		return nil, err
	}
	b, err := r.eval(ctx, x.Y, s)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "==":
		return equal(a, b), nil
	case "!=":
		return !equal(a, b), nil
	}
	an, aok := a.(float64)
	bn, bok := b.(float64)
	if !aok || !bok {
		return nil, &RunError{Pos: x.OpPos, Message: fmt.Sprintf("%s compares two numbers or two durations, not %s and %s", x.Op, typeName(a), typeName(b))}
	}
	switch x.Op {
	case "<":
		return an < bn, nil
	case "<=":
		return an <= bn, nil
	case ">":
		return an > bn, nil
	}
	return an >= bn, nil
}

// number evaluates x, which must be a number or a duration.
func (r *run) number(ctx context.Context, x Expr, s *env, op string) (float64, error) {
	v, err := r.eval(ctx, x, s)
	if err != nil {
		return 0, err
	}
	n, ok := v.(float64)
	if !ok {
		return 0, &RunError{Pos: x.Pos(), Message: fmt.Sprintf("%s wants a number or a duration, not %s", op, typeName(v))}
	}
	return n, nil
}

// member is X.NAME, or the projection X[*].NAME.
func (r *run) member(ctx context.Context, x *MemberExpr, s *env) (any, error) {
	n := x.Name.Name
	if p, ok := x.X.(*ProjectionExpr); ok {
		v, err := r.eval(ctx, p.X, s)
		if err != nil {
			return nil, err
		}
		xs, ok := v.([]any)
		if !ok {
			return nil, &RunError{Pos: p.Pos(), Message: "[*] projects an array, not " + typeName(v)}
		}
		out := make([]any, len(xs))
		for i, e := range xs {
			if out[i], err = field(e, n, x); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	v, err := r.eval(ctx, x.X, s)
	if err != nil {
		return nil, err
	}
	return field(v, n, x)
}

// field is member n of v: an object's field (null when absent), an
// array's count, empty or any, a Verification's passed, failed or checks,
// a team's main.
func field(v any, n string, at *MemberExpr) (any, error) {
	switch v := v.(type) {
	case nil:
		// Only an any value can be null here (the checker refuses a
		// member of an optional one): absence carries through.
		return nil, nil
	case map[string]any:
		return v[n], nil
	case []any:
		switch n {
		case "count":
			return float64(len(v)), nil
		case "empty":
			return len(v) == 0, nil
		case "any":
			return len(v) > 0, nil
		}
	case *Verification:
		switch n {
		case "passed":
			return v.Passed, nil
		case "failed":
			return !v.Passed, nil
		case "checks":
			return v.Checks, nil
		}
	case team:
		if n == "main" {
			return target{alias: v.alias, resource: v.resource, member: "main"}, nil
		}
	}
	return nil, &RunError{Pos: at.Name.Pos(), Message: fmt.Sprintf("%s has no member %s", typeName(v), n)}
}

// call is unique(xs), disjoint(xss) or union(xss).
func (r *run) call(ctx context.Context, x *CallExpr, s *env) (any, error) {
	name := x.Fun.(*Ident).Name
	v, err := r.eval(ctx, x.Args[0], s)
	if err != nil {
		return nil, err
	}
	xs, ok := v.([]any)
	if !ok {
		return nil, &RunError{Pos: x.Args[0].Pos(), Message: fmt.Sprintf("%s takes an array, not %s", name, typeName(v))}
	}
	if name == "unique" {
		seen := make(map[string]bool, len(xs))
		for _, e := range xs {
			k := key(e)
			if seen[k] {
				return false, nil
			}
			seen[k] = true
		}
		return true, nil
	}
	subs := make([][]any, len(xs))
	for i, e := range xs {
		sub, ok := e.([]any)
		if !ok {
			return nil, &RunError{Pos: x.Args[0].Pos(), Message: fmt.Sprintf("%s takes an array of arrays; element %d is %s", name, i, typeName(e))}
		}
		subs[i] = sub
	}
	if name == "union" {
		out := []any{}
		for _, sub := range subs {
			out = append(out, sub...)
		}
		return out, nil
	}
	// disjoint: no value is in two of the arrays (one array may repeat
	// its own).
	owner := map[string]int{}
	for i, sub := range subs {
		for _, e := range sub {
			k := key(e)
			if j, ok := owner[k]; ok && j != i {
				return false, nil
			}
			owner[k] = i
		}
	}
	return true, nil
}

// parallel runs its branches at once and waits for all of them; the
// first to fail cancels the others and is the error.
func (r *run) parallel(ctx context.Context, x *ParallelExpr, s *env) (any, error) {
	vals := make([]any, len(x.Branches))
	err := r.all(ctx, len(x.Branches), len(x.Branches), func(ctx context.Context, i int) error {
		v, err := r.eval(ctx, x.Branches[i].Value, s)
		vals[i] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(vals))
	for i, b := range x.Branches {
		out[b.Name.Name] = vals[i]
	}
	return out, nil
}

// parallelMap evaluates its body for each element of its source, at most
// limit at once, the results in the source's order.
func (r *run) parallelMap(ctx context.Context, x *ParallelMapExpr, s *env) (any, error) {
	v, err := r.eval(ctx, x.Source, s)
	if err != nil {
		return nil, err
	}
	xs, ok := v.([]any)
	if !ok {
		return nil, &RunError{Pos: x.Source.Pos(), Message: "parallel map goes over an array, not " + typeName(v)}
	}
	if len(xs) > MaxMapItems {
		return nil, &RunError{Pos: x.Source.Pos(), Message: fmt.Sprintf("parallel map goes over at most %d elements, not %d", MaxMapItems, len(xs)), Err: ErrLimit}
	}
	limit := len(xs)
	if x.Limit != nil {
		limit = int(x.Limit.Value)
	}
	out := make([]any, len(xs))
	err = r.all(ctx, len(xs), limit, func(ctx context.Context, i int) error {
		ms := newEnv(s)
		ms.set(x.Item.Name, xs[i])
		v, err := r.eval(ctx, x.Body, ms)
		out[i] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// verify evaluates its checks (a parallel group's at once), then pass
// when in a frame of the checks.
func (r *run) verify(ctx context.Context, x *VerifyExpr, s *env) (any, error) {
	checks := map[string]any{}
	vs := newEnv(s)
	for _, vc := range x.Checks {
		var group []*Check
		switch vc := vc.(type) {
		case *Check:
			group = []*Check{vc}
		case *CheckGroup:
			group = vc.Checks
		}
		vals := make([]any, len(group))
		err := r.all(ctx, len(group), len(group), func(ctx context.Context, i int) error {
			v, err := r.eval(ctx, group[i].Value, s)
			vals[i] = v
			return err
		})
		if err != nil {
			return nil, err
		}
		for i, k := range group {
			checks[k.Name.Name] = vals[i]
			vs.set(k.Name.Name, vals[i])
		}
	}
	passed, err := r.cond(ctx, x.Cond, vs, "pass when")
	if err != nil {
		return nil, err
	}
	return &Verification{Passed: passed, Checks: checks}, nil
}

// all calls f for 0..n-1, at most limit at once, and waits for every
// call it started. The first error cancels the context the others see
// and is the result; no new call starts after it.
func (r *run) all(ctx context.Context, n, limit int, f func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	if limit < 1 || limit > n {
		limit = n
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		slots = make(chan struct{}, limit)
	)
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
