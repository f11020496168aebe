(* ks25 Transformers checked by Coq's kernel: memorization by computation.

   The network (docs/papers/ks25.md, the certificate kind `ks`) maps a sequence X = x_1 ... x_n of
   d-dimensional tokens to one rational number:
     f1        a ReLU network applied to every token (R^d -> R^3),
     attention uniform: the context is  s = f1(x_n) + W_OV (1/n) sum_k f1(x_k),
     f2        a ReLU network R^3 -> R^1;  predict X = f2(s).
   A ReLU network is a list of layers x |-> W x + b, each followed by max(0, .) except the last.
   The network memorizes the examples (X_i, y_i) when predict X_i = y_i exactly, for every i.
   Sequence to sequence (Corollary 4.1): the prediction at position p (counted from 0) attends from
   x_(p+1) instead of x_n (predict_at X p), and y_i has a label per position.

   Every number of a network is dyadic: a layer holds integer matrices with one power-of-two scale for
   W and one for b (W / 2^sW, b / 2^sb).  Section "Plain" defines the semantics over Coq's rationals Q,
   nothing else.  Section "Fast" evaluates the same network over binary integers Z, every vector an
   integer list with one common denominator c 2^e (c = 1 in f1, c = n in f2), and `check` compares the
   result of every example with its label.  `check_sound` proves: check = true -> every example is
   memorized (in the plain semantics); `check_at_sound` the same for every position.  `Print Assumptions`
   on both answers "Closed under the global context". *)
From Coq Require Import ZArith QArith Qminmax List Lia.
Import ListNotations.

(* ------------------------------------------------------------------------------------------------ *)
(* The network's data.                                                                               *)

(* 2^s as a positive number. *)
Fixpoint pow2 (s : nat) : positive := match s with O => 1%positive | S s' => xO (pow2 s') end.

(* The rational number m / 2^s. *)
Definition dyadic (m : Z) (s : nat) : Q := m # pow2 s.

(* A layer: x |-> (W / 2^sW) x + b / 2^sb, W a list of rows. *)
Record layer := Layer { W : list (list Z); sW : nat; b : list Z; sb : nat }.

(* f1, the attention's W_OV / 2^sOV (3 x 3), f2. *)
Record network := Network { f1 : list layer; wov : list (list Z); swov : nat; f2 : list layer }.

Fixpoint map2 {A B C : Type} (f : A -> B -> C) (u : list A) (v : list B) : list C :=
  match u, v with a :: u', x :: v' => f a x :: map2 f u' v' | _, _ => [] end.

(* ------------------------------------------------------------------------------------------------ *)
(* Plain semantics over Q.                                                                           *)

Section Plain.
Local Open Scope Q_scope.

Fixpoint dotQ (w x : list Q) : Q :=
  match w, x with a :: w', y :: x' => a * y + dotQ w' x' | _, _ => 0 end.

Definition affineQ (L : layer) (x : list Q) : list Q :=
  map2 (fun row bi => dotQ (map (fun a => dyadic a (sW L)) row) x + dyadic bi (sb L)) (W L) (b L).

Definition relu (q : Q) : Q := Qmax 0 q.

(* ReLU after every layer but the last. *)
Fixpoint netQ (Ls : list layer) (x : list Q) : list Q :=
  match Ls with
  | [] => x
  | L :: Ls' => match Ls' with [] => affineQ L x | _ => netQ Ls' (map relu (affineQ L x)) end
  end.

Definition vaddQ (x y : list Q) : list Q := map2 Qplus x y.

(* The uniform attention from the token x over X: f1(x) + W_OV mean_k f1(x_k), n = length X. *)
Definition attend (N : network) (X : list (list Q)) (x : list Q) : list Q :=
  let mean := map (fun q => q / inject_Z (Z.of_nat (length X)))
                  (fold_right vaddQ (repeat 0 3) (map (netQ (f1 N)) X)) in
  let WOV := map (map (fun a => dyadic a (swov N))) (wov N) in
  vaddQ (netQ (f1 N) x) (map (fun row => dotQ row mean) WOV).

(* Next token (Theorem 4.1): s = f1(x_n) + W_OV mean_k f1(x_k), the prediction f2(s). *)
Definition context (N : network) (X : list (list Q)) : list Q := attend N X (last X []).

Definition predict (N : network) (X : list (list Q)) : Q := hd 0 (netQ (f2 N) (context N X)).

(* Sequence to sequence (Corollary 4.1): the prediction at position p (from 0) attends from nth p X. *)
Definition predict_at (N : network) (X : list (list Q)) (p : nat) : Q :=
  hd 0 (netQ (f2 N) (attend N X (nth p X []))).

(* Token t of a vocabulary of integer vectors with one scale: tokens[t] / 2^sT. *)
Definition token (sT : nat) (tokens : list (list Z)) (t : nat) : list Q :=
  map (fun m => dyadic m sT) (nth t tokens []).

(* Sequence i of a data set: its token indices (binary natural numbers N) looked up in the vocabulary. *)
Definition sequence (sT : nat) (tokens : list (list Z)) (seqs : list (list BinNums.N)) (i : nat) : list (list Q) :=
  map (fun t => token sT tokens (N.to_nat t)) (nth i seqs []).

End Plain.

(* ------------------------------------------------------------------------------------------------ *)
(* Fast evaluation over Z: a vector (x, e) with a fixed c denotes x_j / (c 2^e).                      *)

Section Fast.
Local Open Scope Z_scope.

Definition vec := (list Z * nat)%type.

Fixpoint dotZ (w x : list Z) : Z :=
  match w, x with a :: w', y :: x' => a * y + dotZ w' x' | _, _ => 0 end.

Definition up (z : Z) (k : nat) : Z := Z.shiftl z (Z.of_nat k).

Definition affineZ (L : layer) (c : positive) (v : vec) : vec :=
  let e := snd v in
  let E := Nat.max (sW L + e) (sb L) in
  (map2 (fun row bi => up (dotZ row (fst v)) (E - (sW L + e)) + up (bi * Zpos c) (E - sb L)) (W L) (b L), E).

Definition reluZ (v : vec) : vec := (map (Z.max 0) (fst v), snd v).

(* Common factors 2 out of the denominator. *)
Fixpoint normz (k : nat) (x : list Z) (e : nat) : vec :=
  match k, e with
  | S k', S e' => if forallb Z.even x then normz k' (map Z.div2 x) e' else (x, e)
  | _, _ => (x, e)
  end.
Definition normZ (v : vec) : vec := normz (snd v) (fst v) (snd v).

Fixpoint netZ (Ls : list layer) (c : positive) (v : vec) : vec :=
  match Ls with
  | [] => v
  | L :: Ls' => match Ls' with
                | [] => normZ (affineZ L c v)
                | _ => netZ Ls' c (normZ (reluZ (affineZ L c v)))
                end
  end.

Definition vaddZ (u v : vec) : vec :=
  let E := Nat.max (snd u) (snd v) in
  (map2 (fun a x => up a (E - snd u) + up x (E - snd v)) (fst u) (fst v), E).

Definition timesZ (c : positive) (v : vec) : vec := (map (fun z => z * Zpos c) (fst v), snd v).

Definition mulZ (M : list (list Z)) (s : nat) (v : vec) : vec := (map (fun row => dotZ row (fst v)) M, (s + snd v)%nat).

(* W_OV times the sum of the f1 outputs H of a sequence's n tokens: read with denominator n 2^e, the
   attention's second term. *)
Definition pooled (N : network) (H : list vec) : vec := mulZ (wov N) (swov N) (fold_right vaddZ (repeat 0 3, O) H).

(* f2 on the context f1(x) + pooled (hl = f1(x), denominator n 2^e) is y. *)
Definition out_ok (N : network) (c : positive) (hl P : vec) (y : Z) : bool :=
  let o := netZ (f2 N) c (vaddZ (timesZ c hl) P) in
  match fst o with
  | y0 :: _ => Z.eqb y0 (y * Zpos (c * pow2 (snd o)))
  | [] => false
  end.

Definition check_example (N : network) (F : list vec) (dflt : vec) (s : list BinNums.N) (y : Z) : bool :=
  match s with
  | [] => false
  | _ =>
    let c := Pos.of_nat (length s) in
    out_ok N c (nth (N.to_nat (last s 0%N)) F dflt) (pooled N (map (fun t => nth (N.to_nat t) F dflt) s)) y
  end.

Fixpoint check_all (N : network) (F : list vec) (dflt : vec) (seqs : list (list BinNums.N)) (ys : list Z) : bool :=
  match seqs, ys with
  | [], [] => true
  | s :: seqs', y :: ys' => check_example N F dflt s y && check_all N F dflt seqs' ys'
  | _, _ => false
  end.

(* f1 once per token of the vocabulary, then every example. *)
Definition check (N : network) (sT : nat) (tokens : list (list Z)) (seqs : list (list BinNums.N)) (ys : list Z) : bool :=
  let F := map (fun t => netZ (f1 N) 1 (t, sT)) tokens in
  check_all N F (netZ (f1 N) 1 ([], sT)) seqs ys.

(* Sequence to sequence: every position of every sequence (all of length n) against its label. *)
Fixpoint check_positions (N : network) (F : list vec) (dflt : vec) (c : positive) (P : vec)
         (s : list BinNums.N) (ys : list Z) : bool :=
  match s, ys with
  | [], [] => true
  | t :: s', y :: ys' => out_ok N c (nth (N.to_nat t) F dflt) P y && check_positions N F dflt c P s' ys'
  | _, _ => false
  end.

Definition check_example_at (N : network) (F : list vec) (dflt : vec) (n : nat) (s : list BinNums.N) (ys : list Z) : bool :=
  match s with
  | [] => false
  | _ => Nat.eqb (length s) n &&
         check_positions N F dflt (Pos.of_nat (length s)) (pooled N (map (fun t => nth (N.to_nat t) F dflt) s)) s ys
  end.

Fixpoint check_all_at (N : network) (F : list vec) (dflt : vec) (n : nat) (seqs : list (list BinNums.N))
         (yss : list (list Z)) : bool :=
  match seqs, yss with
  | [], [] => true
  | s :: seqs', ys :: yss' => check_example_at N F dflt n s ys && check_all_at N F dflt n seqs' yss'
  | _, _ => false
  end.

Definition check_at (N : network) (sT : nat) (tokens : list (list Z)) (n : nat) (seqs : list (list BinNums.N))
           (yss : list (list Z)) : bool :=
  let F := map (fun t => netZ (f1 N) 1 (t, sT)) tokens in
  check_all_at N F (netZ (f1 N) 1 ([], sT)) n seqs yss.

End Fast.

(* ------------------------------------------------------------------------------------------------ *)
(* The fast evaluation denotes the plain one.                                                        *)

Definition scaled (z : Z) (c : positive) (e : nat) : Q := z # (c * pow2 e).

Definition R (c : positive) (v : vec) (q : list Q) : Prop :=
  Forall2 (fun z r => Qeq r (scaled z c (snd v))) (fst v) q.

Lemma pow2_add s e : pow2 (s + e) = (pow2 s * pow2 e)%positive.
Proof. induction s as [|s IH]; simpl; [reflexivity|now rewrite IH]. Qed.

Lemma pow2_Z s : Zpos (pow2 s) = (2 ^ Z.of_nat s)%Z.
Proof.
  induction s as [|s IH]; [reflexivity|].
  rewrite Nat2Z.inj_succ, Z.pow_succ_r by lia. simpl pow2. rewrite Pos2Z.inj_xO, IH. ring.
Qed.

Lemma up_spec z k : up z k = (z * Zpos (pow2 k))%Z.
Proof. unfold up. rewrite Z.shiftl_mul_pow2 by lia. now rewrite pow2_Z. Qed.

Lemma scaled_up z c e E : (e <= E)%nat -> Qeq (scaled (up z (E - e)) c E) (scaled z c e).
Proof.
  intro H. unfold scaled, Qeq; simpl. rewrite up_spec.
  replace E with ((E - e) + e)%nat at 2 by lia. rewrite pow2_add, !Pos2Z.inj_mul. ring.
Qed.

Lemma scaled_plus u v c e : Qeq (scaled u c e + scaled v c e) (scaled (u + v) c e).
Proof. unfold scaled, Qeq, Qplus; simpl. rewrite !Pos2Z.inj_mul. ring. Qed.

Lemma scaled_mult a s z c e : Qeq (dyadic a s * scaled z c e) (scaled (a * z) c (s + e)).
Proof. unfold scaled, dyadic, Qeq, Qmult; simpl. rewrite pow2_add, !Pos2Z.inj_mul. ring. Qed.

Lemma scaled_zero c e : Qeq 0 (scaled 0 c e).
Proof. reflexivity. Qed.

Lemma dot_ok c e s w x q :
  Forall2 (fun z r => Qeq r (scaled z c e)) x q ->
  Qeq (dotQ (map (fun a => dyadic a s) w) q) (scaled (dotZ w x) c (s + e)).
Proof.
  revert x q. induction w as [|a w IH]; intros x q H; simpl.
  - destruct q; reflexivity.
  - destruct H as [|z r x' q' Hzr H]; simpl; [reflexivity|].
    rewrite Hzr, IH by exact H. rewrite scaled_mult. apply scaled_plus.
Qed.

Lemma map2_same {A B C D : Type} (P : C -> D -> Prop) (f : A -> B -> C) (g : A -> B -> D) u v :
  (forall a x, P (f a x) (g a x)) -> Forall2 P (map2 f u v) (map2 g u v).
Proof. revert v. induction u; intros [|x v] H; simpl; constructor; auto. Qed.

Lemma map2_rel {A B C D E F : Type} (P : A -> B -> Prop) (P' : C -> D -> Prop) (P'' : E -> F -> Prop)
      (f : A -> C -> E) (g : B -> D -> F) u q v r :
  Forall2 P u q -> Forall2 P' v r -> (forall a s x t, P a s -> P' x t -> P'' (f a x) (g s t)) ->
  Forall2 P'' (map2 f u v) (map2 g q r).
Proof.
  intros H; revert v r. induction H; intros v r H' Hf; simpl; [constructor|].
  destruct H'; simpl; constructor; auto.
Qed.

Lemma affine_ok L c v q : R c v q -> R c (affineZ L c v) (affineQ L q).
Proof.
  intro H. unfold R, affineZ, affineQ; simpl. apply map2_same. intros row bi.
  rewrite (dot_ok c (snd v) (sW L) row (fst v) q H).
  assert (Hb : Qeq (dyadic bi (sb L)) (scaled (bi * Zpos c) c (sb L))).
  { unfold dyadic, scaled, Qeq; simpl. rewrite Pos2Z.inj_mul. ring. }
  rewrite <- scaled_plus, !scaled_up by lia. now rewrite Hb.
Qed.

Lemma scaled_nonneg z c e : Qle 0 (scaled z c e) <-> (0 <= z)%Z.
Proof. unfold scaled, Qle; simpl. lia. Qed.

Lemma relu_ok c v q : R c v q -> R c (reluZ v) (map relu q).
Proof.
  unfold R, reluZ; simpl. intro H. induction H; simpl; constructor; auto.
  unfold relu. rewrite H. destruct (Z.le_gt_cases 0 x) as [Hx|Hx].
  - rewrite Z.max_r by exact Hx. apply Q.max_r. now apply scaled_nonneg.
  - rewrite Z.max_l by lia. rewrite Q.max_l; [reflexivity|].
    apply Qnot_lt_le. intro Hlt. apply Qlt_le_weak in Hlt. apply scaled_nonneg in Hlt. lia.
Qed.

Lemma halve_ok c e x q :
  forallb Z.even x = true -> Forall2 (fun z r => Qeq r (scaled z c (S e))) x q ->
  Forall2 (fun z r => Qeq r (scaled z c e)) (map Z.div2 x) q.
Proof.
  intros He H. induction H; simpl; constructor; simpl in He; apply andb_prop in He; destruct He as [Hx He]; auto.
  rewrite H. assert (Hd : x = (2 * Z.div2 x)%Z).
  { rewrite (Z.div2_odd x) at 1. rewrite <- Z.negb_even, Hx. cbn [negb Z.b2z]. apply Z.add_0_r. }
  unfold scaled, Qeq; cbn [Qnum Qden pow2]. rewrite Hd at 1.
  rewrite !Pos2Z.inj_mul, (Pos2Z.inj_xO (pow2 e)). ring.
Qed.

Lemma normz_ok c k x e q : R c (x, e) q -> R c (normz k x e) q.
Proof.
  revert x e. induction k as [|k IH]; intros x e H; [exact H|]. destruct e as [|e]; [exact H|]. simpl.
  destruct (forallb Z.even x) eqn:He; [|exact H]. apply IH. exact (halve_ok c e x q He H).
Qed.

Lemma norm_ok c v q : R c v q -> R c (normZ v) q.
Proof. destruct v as [x e]. apply normz_ok. Qed.

Lemma net_ok Ls c v q : R c v q -> R c (netZ Ls c v) (netQ Ls q).
Proof.
  revert v q. induction Ls as [|L Ls IH]; intros v q H; [exact H|]. simpl. destruct Ls as [|L' Ls'].
  - apply norm_ok, affine_ok, H.
  - apply IH, norm_ok, relu_ok, affine_ok, H.
Qed.

Lemma vadd_ok c u q v r : R c u q -> R c v r -> R c (vaddZ u v) (vaddQ q r).
Proof.
  unfold R, vaddZ, vaddQ. simpl. intros Hu Hv. apply (map2_rel _ _ _ _ _ _ _ _ _ Hu Hv).
  intros a s x t Ha Hx. rewrite Ha, Hx, <- scaled_plus, !scaled_up by lia. reflexivity.
Qed.

Lemma zero_ok c : R c (repeat 0%Z 3, O) (repeat 0%Q 3).
Proof. repeat constructor. Qed.

Lemma sum_ok c H Q : Forall2 (R c) H Q -> R c (fold_right vaddZ (repeat 0%Z 3, O) H) (fold_right vaddQ (repeat 0%Q 3) Q).
Proof. intro HQ. induction HQ; simpl; [apply zero_ok|]. now apply vadd_ok. Qed.

Lemma mean_ok p v q : R 1 v q -> R p v (map (fun r => r / inject_Z (Zpos p)) q).
Proof.
  unfold R. intro H. induction H; simpl; constructor; auto. rewrite H.
  unfold scaled, Qdiv, Qinv, Qeq, Qmult; simpl. rewrite !Pos2Z.inj_mul. ring.
Qed.

Lemma times_ok p v q : R 1 v q -> R p (timesZ p v) q.
Proof.
  unfold R, timesZ; simpl. intro H. induction H; simpl; constructor; auto. rewrite H.
  unfold scaled, Qeq; simpl. rewrite !Pos2Z.inj_mul. ring.
Qed.

Lemma mul_ok c s M v q : R c v q ->
  R c (mulZ M s v) (map (fun row => dotQ row q) (map (map (fun a => dyadic a s)) M)).
Proof.
  unfold R, mulZ; simpl. intro H. rewrite map_map. induction M as [|row M IH]; simpl; constructor; auto.
  apply (dot_ok c (snd v) s row (fst v) q H).
Qed.

Lemma last_map {A B : Type} (f : A -> B) (l : list A) d d' : l <> [] -> last (map f l) d' = f (last l d).
Proof.
  induction l as [|a l IH]; intro H; [congruence|]. destruct l as [|a' l]; [reflexivity|].
  change (last (map f (a :: a' :: l)) d') with (last (map f (a' :: l)) d'). rewrite IH by discriminate. reflexivity.
Qed.

Lemma pos_of_nat_Z n : n <> O -> Zpos (Pos.of_nat n) = Z.of_nat n.
Proof. intro H. rewrite <- (Nat2Pos.id n H) at 2. now rewrite positive_nat_Z. Qed.

Lemma f1_token_ok N sT tokens t :
  R 1 (netZ (f1 N) 1 (nth t tokens [], sT)) (netQ (f1 N) (token sT tokens t)).
Proof.
  apply net_ok. unfold R, token; simpl. induction (nth t tokens []); simpl; constructor; auto.
  unfold scaled, dyadic, Qeq; simpl. reflexivity.
Qed.

Section Example.
Variables (N : network) (sT : nat) (tokens : list (list Z)).
Let F := map (fun t => netZ (f1 N) 1 (t, sT)) tokens.
Let dflt := netZ (f1 N) 1 ([], sT).
Let tok (t : BinNums.N) : list Q := token sT tokens (N.to_nat t).

Lemma F_ok t : R 1 (nth (N.to_nat t) F dflt) (netQ (f1 N) (tok t)).
Proof.
  unfold F, dflt, tok. rewrite (map_nth (fun t => netZ (f1 N) 1 (t, sT))). apply f1_token_ok.
Qed.

Lemma pooled_ok s : s <> [] ->
  let X := map tok s in
  R (Pos.of_nat (length s)) (pooled N (map (fun t => nth (N.to_nat t) F dflt) s))
    (map (fun row => dotQ row (map (fun q => q / inject_Z (Z.of_nat (length X)))
                                   (fold_right vaddQ (repeat 0%Q 3) (map (netQ (f1 N)) X))))
         (map (map (fun a => dyadic a (swov N))) (wov N))).
Proof.
  intros Hne X. assert (Hn : length s <> O) by (destruct s; [congruence|discriminate]).
  unfold pooled. apply mul_ok. unfold X. rewrite map_length, <- (pos_of_nat_Z _ Hn). apply mean_ok.
  apply sum_ok. rewrite map_map. clear X Hne Hn. induction s as [|t s IH]; simpl; constructor; auto. apply F_ok.
Qed.

Lemma out_ok_sound c hl P x q y :
  R 1 hl (netQ (f1 N) x) -> R c P q -> out_ok N c hl P y = true ->
  Qeq (hd 0%Q (netQ (f2 N) (vaddQ (netQ (f1 N) x) q))) (inject_Z y).
Proof.
  intros Hl HP. pose proof (net_ok (f2 N) c _ _ (vadd_ok c _ _ _ _ (times_ok c _ _ Hl) HP)) as Hout.
  unfold out_ok. revert Hout. destruct (netZ (f2 N) c _) as [o e]. unfold R. simpl. intro Hout.
  destruct o as [|y0 o]; intro Hy; [discriminate|]. apply Z.eqb_eq in Hy.
  inversion Hout as [|a r l l' Hr Hrest]; subst. simpl. rewrite Hr.
  unfold scaled, Qeq, inject_Z; simpl. rewrite Pos2Z.inj_mul. ring.
Qed.

Lemma check_example_ok s y :
  check_example N F dflt s y = true -> Qeq (predict N (map tok s)) (inject_Z y).
Proof.
  unfold check_example. destruct s as [|t0 s0] eqn:Hs; [discriminate|]. rewrite <- Hs.
  assert (Hne : s <> []) by (rewrite Hs; discriminate).
  intro H. unfold predict, context, attend. rewrite (last_map _ _ 0%N) by exact Hne.
  exact (out_ok_sound _ _ _ _ _ _ (F_ok _) (pooled_ok s Hne) H).
Qed.

Lemma check_positions_ok c P q s' ys :
  R c P q -> check_positions N F dflt c P s' ys = true ->
  forall p, (p < length s')%nat ->
  Qeq (hd 0%Q (netQ (f2 N) (vaddQ (netQ (f1 N) (tok (nth p s' 0%N))) q))) (inject_Z (nth p ys 0%Z)).
Proof.
  intro HP. revert ys. induction s' as [|t s' IH]; intros ys H p Hp; simpl in Hp; [lia|].
  destruct ys as [|y ys]; [discriminate|]. simpl in H. apply andb_prop in H. destruct H as [H1 H2].
  destruct p as [|p]; simpl.
  - exact (out_ok_sound _ _ _ _ _ _ (F_ok t) HP H1).
  - apply IH; [exact H2|lia].
Qed.

Lemma check_example_at_ok n s ys :
  check_example_at N F dflt n s ys = true ->
  forall p, (p < n)%nat -> Qeq (predict_at N (map tok s) p) (inject_Z (nth p ys 0%Z)).
Proof.
  unfold check_example_at. destruct s as [|t0 s0] eqn:Hs; [discriminate|]. rewrite <- Hs.
  assert (Hne : s <> []) by (rewrite Hs; discriminate).
  intros H p Hp. apply andb_prop in H. destruct H as [Hlen H]. apply Nat.eqb_eq in Hlen.
  unfold predict_at, attend.
  rewrite (nth_indep _ [] (tok 0%N)) by (rewrite map_length; lia). rewrite map_nth.
  apply (check_positions_ok _ _ _ s ys (pooled_ok s Hne) H). lia.
Qed.

End Example.

Theorem check_sound N sT tokens seqs ys :
  check N sT tokens seqs ys = true ->
  forall i, (i < length seqs)%nat -> Qeq (predict N (sequence sT tokens seqs i)) (inject_Z (nth i ys 0%Z)).
Proof.
  unfold check, sequence. revert ys. induction seqs as [|s seqs IH]; intros ys Hc i Hi; simpl in Hi; [lia|].
  destruct ys as [|y ys]; [discriminate|]. simpl in Hc. apply andb_prop in Hc. destruct Hc as [H1 H2].
  destruct i as [|i]; simpl.
  - exact (check_example_ok N sT tokens s y H1).
  - apply IH; [exact H2|lia].
Qed.

Theorem check_at_sound N sT tokens n seqs yss :
  check_at N sT tokens n seqs yss = true ->
  forall i p, (i < length seqs)%nat -> (p < n)%nat ->
  Qeq (predict_at N (sequence sT tokens seqs i) p) (inject_Z (nth p (nth i yss []) 0%Z)).
Proof.
  unfold check_at, sequence. revert yss. induction seqs as [|s seqs IH]; intros yss Hc i p Hi Hp; simpl in Hi; [lia|].
  destruct yss as [|ys yss]; [discriminate|]. simpl in Hc. apply andb_prop in Hc. destruct Hc as [H1 H2].
  destruct i as [|i]; simpl.
  - exact (check_example_at_ok N sT tokens n s ys H1 p Hp).
  - apply IH; [exact H2|lia|exact Hp].
Qed.
