(* mahdavi24 Theorem 1 certificates checked by Coq's kernel: an attention layer over the real numbers.

   An example t is a context E_t (n tokens of R^d, as rows) and a query e_t in R^d.  Head h has
   W_K^h, W_Q^h (d x d_h) and W_V^h (d x d_v); then W_O (H d_v x d) and W_D (d x d_out):
     (1) logits   a_h(t)_j   = E_t,j W_K^h (W_Q^h)^T e_t                     (exact rationals)
     (2) weights  alpha_h(t) = softmax(a_h(t)), with Coq's real exponential Rtrigo_def.exp
     (3) mix      p_h(t)     = E_t^T alpha_h(t)                              (in R^d)
     (4) value    o_h(t)     = (W_V^h)^T p_h(t)
     (5) output   o(t)       = W_O^T [o_1(t); ...; o_H(t)]   (+ e_t with the skip connection)
     (6) read-out y_hat(t)   = W_D^T o(t)
   Row t of Z (T x H d) is [p_1(t); ...; p_H(t)].  Section Model defines all of it over Coq's reals R
   (the data and weights are rationals Q, embedded by Q2R) and nothing else.

   Section Check computes, over Q only, an interval for every real quantity above: exp by
   1 + y <= exp y <= 1 / (1 - y) at y = x / 2^k (x <= 0, the logit minus its row's maximum), squared k
   times (exp (2 z) = exp z ^ 2) with outward rounding to multiples of 2^-prec; then the softmax, Z's
   entries and the read-out by interval sums and products with exact rationals.  Three checks use them:
     - rank: for T columns C of Z and a rational T x T matrix R (given; any R works if the check passes)
       every row a of I - R Z[:, C]^T has absolute row sum < 1 for every Z in the intervals, so
       Z[:, C]^T c = 0 forces c = 0 (c_a = ((I - R Z[:, C]^T) c)_a, so max |c| < max |c| unless c = 0);
     - real labels: |y_hat - y| <= 2^-20 max(1, |y|) (tolQ);
     - class labels: the labelled output's lower end above every other output's upper end.
   The soundness theorems (rows_independent_sound, labels_sound, classes_sound) derive the statements
   over R from the checks' being true.  They rest on Coq's standard axioms of the real numbers only. *)
From Coq Require Import ZArith QArith Qabs Qreals Reals Lra Lia List.
Import ListNotations.

(* ------------------------------------------------------------------------------------------------ *)
(* Finite sums and maxima over R.                                                                    *)

Open Scope R_scope.

Fixpoint rsum (n : nat) (f : nat -> R) : R := match n with O => 0 | S m => rsum m f + f m end.

Lemma rsum_ext n f g : (forall i, (i < n)%nat -> f i = g i) -> rsum n f = rsum n g.
Proof. induction n; simpl; intros H; [reflexivity|]. rewrite IHn, H; auto with arith. Qed.

Lemma rsum_0 n : rsum n (fun _ => 0) = 0.
Proof. induction n; simpl; [reflexivity|]. rewrite IHn; lra. Qed.

Lemma rsum_plus n f g : rsum n (fun i => f i + g i) = rsum n f + rsum n g.
Proof. induction n; simpl; [lra|]. rewrite IHn; lra. Qed.

Lemma rsum_scal n k f : rsum n (fun i => k * f i) = k * rsum n f.
Proof. induction n; simpl; [lra|]. rewrite IHn; lra. Qed.

Lemma rsum_swap n m (f : nat -> nat -> R) :
  rsum n (fun i => rsum m (fun j => f i j)) = rsum m (fun j => rsum n (fun i => f i j)).
Proof.
  induction n; simpl.
  - induction m; simpl; [reflexivity|]. rewrite <- IHm; lra.
  - rewrite IHn, <- rsum_plus. reflexivity.
Qed.

Lemma rsum_le n f g : (forall i, (i < n)%nat -> f i <= g i) -> rsum n f <= rsum n g.
Proof. induction n; simpl; intros H; [lra|]. apply Rplus_le_compat; auto with arith. Qed.

Lemma rsum_abs n f : Rabs (rsum n f) <= rsum n (fun i => Rabs (f i)).
Proof.
  induction n; simpl; [rewrite Rabs_R0; lra|].
  eapply Rle_trans; [apply Rabs_triang|]. lra.
Qed.

Lemma rsum_delta n a f : (a < n)%nat -> rsum n (fun i => (if Nat.eqb a i then 1 else 0) * f i) = f a.
Proof.
  induction n; intros Ha; [lia|]. simpl.
  destruct (Nat.eq_dec a n) as [->|Hne].
  - rewrite Nat.eqb_refl.
    replace (rsum n _) with 0; [lra|].
    transitivity (rsum n (fun _ => 0)).
    + symmetry. apply rsum_0.
    + apply rsum_ext. intros i Hi. replace (Nat.eqb n i) with false; [lra|].
      symmetry. apply Nat.eqb_neq. lia.
  - rewrite IHn by lia. replace (Nat.eqb a n) with false; [lra|]. symmetry. apply Nat.eqb_neq. auto.
Qed.

Lemma rsum_pos n f : (0 < n)%nat -> (forall i, (i < n)%nat -> 0 < f i) -> 0 < rsum n f.
Proof.
  induction n; intros Hn H; [lia|]. simpl.
  destruct n.
  - simpl. specialize (H 0%nat ltac:(lia)). lra.
  - assert (0 < rsum (S n) f) by (apply IHn; [lia|intros i Hi; apply H; lia]). specialize (H (S n) ltac:(lia)). lra.
Qed.

Lemma rsum_ge_term n f j : (forall k, (k < n)%nat -> 0 <= f k) -> (j < n)%nat -> f j <= rsum n f.
Proof.
  induction n; intros Hf Hj; [lia|]. simpl.
  destruct (Nat.eq_dec j n) as [->|Hne].
  - assert (0 <= rsum n f). { clear IHn Hj. induction n; simpl; [lra|]. pose proof (Hf n ltac:(lia)).
      assert (0 <= rsum n f) by (apply IHn; intros; apply Hf; lia). lra. }
    lra.
  - pose proof (Hf n ltac:(lia)). assert (f j <= rsum n f) by (apply IHn; [intros; apply Hf; lia|lia]). lra.
Qed.

Fixpoint rmax (n : nat) (f : nat -> R) : R := match n with O => 0 | S m => Rmax (rmax m f) (Rabs (f m)) end.

Lemma rmax_ge n f i : (i < n)%nat -> Rabs (f i) <= rmax n f.
Proof.
  induction n; intros Hi; [lia|]. simpl.
  destruct (Nat.eq_dec i n) as [->|Hne]; [apply Rmax_r|].
  eapply Rle_trans; [apply IHn; lia|apply Rmax_l].
Qed.

Lemma rmax_at n f : rmax n f = 0 \/ exists a, (a < n)%nat /\ rmax n f = Rabs (f a).
Proof.
  induction n; simpl; [left; reflexivity|].
  unfold Rmax. destruct (Rle_dec (rmax n f) (Rabs (f n))).
  - right. exists n. split; [lia|reflexivity].
  - destruct IHn as [H|[a [Ha H]]]; [left; exact H|right; exists a; split; [lia|exact H]].
Qed.

(* The rank argument: if every row of I - R M has absolute row sum < 1, then M c = 0 forces c = 0. *)
Lemma independent_of_near_inverse T (M Rm : nat -> nat -> R) (c : nat -> R) :
  (forall a, (a < T)%nat ->
     rsum T (fun i => Rabs ((if Nat.eqb a i then 1 else 0) - rsum T (fun l => Rm a l * M l i))) < 1) ->
  (forall l, (l < T)%nat -> rsum T (fun i => c i * M l i) = 0) ->
  forall i, (i < T)%nat -> c i = 0.
Proof.
  intros Hs Hk.
  assert (Hm : rmax T c = 0).
  { destruct (rmax_at T c) as [H0|[a [Ha Hma]]]; [exact H0|].
    set (s := rsum T (fun i => Rabs ((if Nat.eqb a i then 1 else 0) - rsum T (fun l => Rm a l * M l i)))).
    assert (Hs1 : s < 1) by (apply Hs; exact Ha).
    assert (Hca : c a = rsum T (fun i => ((if Nat.eqb a i then 1 else 0) - rsum T (fun l => Rm a l * M l i)) * c i)).
    { transitivity (rsum T (fun i => (if Nat.eqb a i then 1 else 0) * c i) -
                    rsum T (fun l => Rm a l * rsum T (fun i => c i * M l i))).
      - rewrite rsum_delta by exact Ha.
        replace (rsum T (fun l => Rm a l * rsum T (fun i => c i * M l i))) with 0; [lra|].
        transitivity (rsum T (fun _ => 0)).
        + symmetry. apply rsum_0.
        + apply rsum_ext. intros l Hl. rewrite Hk by exact Hl. lra.
      - transitivity (rsum T (fun i => (if Nat.eqb a i then 1 else 0) * c i) -
                      rsum T (fun i => rsum T (fun l => Rm a l * M l i) * c i)).
        + f_equal.
          transitivity (rsum T (fun l => rsum T (fun i => Rm a l * M l i * c i))).
          * apply rsum_ext. intros l _. rewrite <- rsum_scal. apply rsum_ext. intros i _. lra.
          * rewrite rsum_swap. apply rsum_ext. intros i _.
            rewrite Rmult_comm, <- rsum_scal. apply rsum_ext. intros l _. lra.
        + replace (rsum T (fun i => (if Nat.eqb a i then 1 else 0) * c i) -
                   rsum T (fun i => rsum T (fun l => Rm a l * M l i) * c i))
            with (rsum T (fun i => (if Nat.eqb a i then 1 else 0) * c i) +
                  rsum T (fun i => -1 * (rsum T (fun l => Rm a l * M l i) * c i))) by (rewrite rsum_scal; lra).
          rewrite <- rsum_plus. apply rsum_ext. intros i _. lra. }
    assert (Hle : Rabs (c a) <= s * rmax T c).
    { rewrite Hca. eapply Rle_trans; [apply rsum_abs|].
      unfold s. rewrite Rmult_comm, <- rsum_scal. apply rsum_le. intros i Hi.
      rewrite Rabs_mult, (Rmult_comm (rmax T c)). apply Rmult_le_compat_l; [apply Rabs_pos|]. apply rmax_ge; exact Hi. }
    assert (H0 : 0 <= rmax T c) by (rewrite Hma; apply Rabs_pos).
    assert (0 <= s) by (unfold s; eapply Rle_trans; [|apply rsum_abs]; apply Rabs_pos).
    rewrite <- Hma in Hle. nra. }
  intros i Hi. pose proof (rmax_ge T c i Hi) as H. rewrite Hm in H.
  pose proof (Rabs_pos (c i)). destruct (Req_dec (c i) 0) as [E|E]; [exact E|]. pose proof (Rabs_pos_lt _ E). lra.
Qed.

(* ------------------------------------------------------------------------------------------------ *)
(* Rational intervals, rounded outward to multiples of 2^-p.                                         *)

Fixpoint pow2 (s : nat) : positive := match s with O => 1%positive | S s' => xO (pow2 s') end.

Lemma pow2_IZR s : IZR (Zpos (pow2 (S s))) = 2 * IZR (Zpos (pow2 s)).
Proof. simpl pow2. rewrite Pos2Z.inj_xO, mult_IZR. reflexivity. Qed.

Lemma pow2_Z p : Zpos (pow2 p) = (2 ^ Z.of_nat p)%Z.
Proof.
  induction p as [|p IH]; [reflexivity|]. cbn [pow2]. rewrite Pos2Z.inj_xO, IH, Nat2Z.inj_succ, Z.pow_succ_r by lia.
  reflexivity.
Qed.

(* q rounded down to a multiple of 2^-p: floor(num 2^p / den), a shift when den is a power of 2 (the
   enclosures' denominators are). *)
Definition down (p : nat) (q : Q) : Q :=
  let a := Qnum q in let b := Zpos (Qden q) in let s := Z.log2 b in
  Qmake (if Z.eqb b (Z.shiftl 1 s) then Z.shiftr a (s - Z.of_nat p) else Z.div (a * Zpos (pow2 p)) b) (pow2 p).

Lemma down_num p q : Qnum (down p q) = Z.div (Qnum q * Zpos (pow2 p)) (Zpos (Qden q)).
Proof.
  unfold down. cbn [Qnum]. destruct (Z.eqb _ _) eqn:Eb; [|reflexivity].
  apply Z.eqb_eq in Eb. pose proof (Z.log2_nonneg (Zpos (Qden q))) as Hs.
  rewrite Eb at 2. rewrite Z.shiftl_1_l, pow2_Z, <- Z.shiftl_mul_pow2, <- Z.shiftr_div_pow2 by lia.
  rewrite Z.shiftr_shiftl_l by lia. rewrite <- Z.shiftr_opp_r. f_equal. lia.
Qed.

Definition up (p : nat) (q : Q) : Q := Qopp (down p (Qopp q)).

Lemma down_le p q : (down p q <= q)%Q.
Proof.
  unfold Qle. rewrite down_num. replace (QDen (down p q)) with (Zpos (pow2 p)) by reflexivity.
  rewrite Z.mul_comm. apply Z.mul_div_le. lia.
Qed.

Lemma up_ge p q : (q <= up p q)%Q.
Proof.
  unfold up. pose proof (down_le p (- q)) as H.
  rewrite <- (Qopp_involutive q) at 1. apply Qopp_le_compat. exact H.
Qed.

Lemma Q2R_0 : Q2R 0 = 0.
Proof. unfold Q2R; simpl. rewrite Rinv_1. ring. Qed.

Lemma Q2R_1 : Q2R 1 = 1.
Proof. unfold Q2R; simpl. rewrite Rinv_1. ring. Qed.

Notation ival := (Q * Q)%type.
Definition encl (i : ival) (x : R) : Prop := Q2R (fst i) <= x <= Q2R (snd i).

Definition qmax (a b : Q) : Q := if Qle_bool a b then b else a.
Definition qltb (a b : Q) : bool := negb (Qle_bool b a).

Lemma qltb_lt a b : qltb a b = true -> Q2R a < Q2R b.
Proof.
  unfold qltb. intros H. apply Qlt_Rlt. apply Qnot_le_lt. intros Hle.
  apply Qle_bool_iff in Hle. rewrite Hle in H. discriminate.
Qed.

Lemma qleb_le a b : Qle_bool a b = true -> Q2R a <= Q2R b.
Proof. intros H. apply Qle_Rle. apply Qle_bool_iff. exact H. Qed.

Section Intervals.
Variable prec : nat.

Definition ird (i : ival) : ival := (down prec (fst i), up prec (snd i)).

Lemma ird_sound i x : encl i x -> encl (ird i) x.
Proof.
  unfold encl, ird; simpl. intros [H1 H2].
  pose proof (Qle_Rle _ _ (down_le prec (fst i))). pose proof (Qle_Rle _ _ (up_ge prec (snd i))). lra.
Qed.

Definition iadd (i j : ival) : ival := ird ((fst i + fst j)%Q, (snd i + snd j)%Q).

Lemma iadd_sound i j x y : encl i x -> encl j y -> encl (iadd i j) (x + y).
Proof.
  unfold encl; intros [H1 H2] [H3 H4]. apply ird_sound. unfold encl; simpl.
  rewrite !Q2R_plus. lra.
Qed.

Definition iscale (w : Q) (i : ival) : ival :=
  ird (if Qle_bool 0 w then ((w * fst i)%Q, (w * snd i)%Q) else ((w * snd i)%Q, (w * fst i)%Q)).

Lemma iscale_sound w i x : encl i x -> encl (iscale w i) (Q2R w * x).
Proof.
  unfold encl; intros [H1 H2]. unfold iscale. apply ird_sound. unfold encl.
  destruct (Qle_bool 0 w) eqn:Hw; simpl; rewrite !Q2R_mult.
  - apply qleb_le in Hw. rewrite Q2R_0 in Hw. split; apply Rmult_le_compat_l; lra.
  - assert (Hn : Q2R w < 0).
    { rewrite <- Q2R_0. apply Qlt_Rlt, Qnot_le_lt. intros Hle. apply Qle_bool_iff in Hle. congruence. }
    split; nra.
Qed.

Fixpoint isum (n : nat) (f : nat -> ival) : ival := match n with O => (0%Q, 0%Q) | S m => iadd (isum m f) (f m) end.

Lemma isum_sound n f g : (forall i, (i < n)%nat -> encl (f i) (g i)) -> encl (isum n f) (rsum n g).
Proof.
  induction n; intros H; simpl.
  - unfold encl; simpl. rewrite Q2R_0. lra.
  - apply iadd_sound; auto with arith.
Qed.

Definition clamp0 (q : Q) : Q := if Qle_bool 0 q then q else 0%Q.

Lemma clamp0_sound q x : Q2R q <= x -> 0 <= x -> 0 <= Q2R (clamp0 q) <= x.
Proof.
  unfold clamp0. destruct (Qle_bool 0 q) eqn:E.
  - apply qleb_le in E. rewrite Q2R_0 in E. lra.
  - rewrite Q2R_0. lra.
Qed.

(* exp x for x <= 0: y = x / 2^k, [1 + y, 1 / (1 - y)] encloses exp y; k squarings give exp x. *)
Fixpoint isq (k : nat) (i : ival) : ival :=
  match k with O => i | S k' => isq k' (clamp0 (down prec (fst i * fst i)), up prec (snd i * snd i)) end.

Lemma isq_sound k : forall i z, 0 <= Q2R (fst i) -> encl i (exp z) ->
  0 <= Q2R (fst (isq k i)) /\ encl (isq k i) (exp (z * IZR (Zpos (pow2 k)))).
Proof.
  induction k; intros i z H0 [H1 H2].
  - simpl. rewrite Rmult_1_r. unfold encl. auto.
  - assert (He : exp (z * IZR (Zpos (pow2 (S k)))) = exp ((2 * z) * IZR (Zpos (pow2 k)))).
    { rewrite pow2_IZR. f_equal. ring. }
    rewrite He. cbn [isq]. apply IHk; simpl.
    + apply clamp0_sound with (x := exp (2 * z)); [|left; apply exp_pos].
      eapply Rle_trans; [apply Qle_Rle, down_le|]. rewrite Q2R_mult.
      replace (2 * z) with (z + z) by ring. rewrite exp_plus. apply Rmult_le_compat; lra.
    + replace (2 * z) with (z + z) by ring. rewrite exp_plus. unfold encl; simpl. split.
      * apply clamp0_sound; [|left; apply Rmult_lt_0_compat; apply exp_pos].
        eapply Rle_trans; [apply Qle_Rle, down_le|]. rewrite Q2R_mult. apply Rmult_le_compat; lra.
      * eapply Rle_trans; [|apply Qle_Rle, up_ge]. rewrite Q2R_mult.
        pose proof (exp_pos z). apply Rmult_le_compat; lra.
Qed.

Definition iexp (k : nat) (x : Q) : ival :=
  let y := (x * (1 # pow2 k))%Q in
  isq k (clamp0 (down prec (1 + y)), up prec (/ (1 - y))).

Lemma iexp_sound k x : (x <= 0)%Q -> 0 <= Q2R (fst (iexp k x)) /\ encl (iexp k x) (exp (Q2R x)).
Proof.
  intros Hx. unfold iexp.
  set (y := (x * (1 # pow2 k))%Q).
  set (P := IZR (Zpos (pow2 k))).
  assert (HP : 0 < P) by (unfold P; apply IZR_lt; lia).
  assert (Hy : Q2R y = Q2R x / P).
  { unfold y. rewrite Q2R_mult. unfold Q2R at 2. cbn [Qnum Qden]. fold P. field. lra. }
  assert (Hx' : Q2R x <= 0) by (apply Qle_Rle in Hx; rewrite Q2R_0 in Hx; exact Hx).
  assert (Hy0 : Q2R y <= 0).
  { rewrite Hy. unfold Rdiv. pose proof (Rinv_0_lt_compat P HP). nra. }
  replace (Q2R x) with (Q2R y * P) by (rewrite Hy; field; lra).
  apply isq_sound; simpl.
  - apply clamp0_sound with (x := exp (Q2R y)); [|left; apply exp_pos].
    eapply Rle_trans; [apply Qle_Rle, down_le|]. rewrite Q2R_plus, Q2R_1. apply exp_ineq1_le.
  - unfold encl; simpl. split.
    + apply clamp0_sound; [|left; apply exp_pos].
      eapply Rle_trans; [apply Qle_Rle, down_le|]. rewrite Q2R_plus, Q2R_1. apply exp_ineq1_le.
    + eapply Rle_trans; [|apply Qle_Rle, up_ge].
      assert (Hn : ~ (1 - y == 0)%Q).
      { intros E. apply Qeq_eqR in E. rewrite Q2R_minus, Q2R_1, Q2R_0 in E. lra. }
      rewrite Q2R_inv by exact Hn. rewrite Q2R_minus, Q2R_1.
      assert (E1 : exp (Q2R y) = / exp (- Q2R y)).
      { rewrite exp_Ropp, Rinv_inv. reflexivity. }
      rewrite E1. apply Rinv_le_contravar; [lra|].
      pose proof (exp_ineq1_le (- Q2R y)). lra.
Qed.

(* Below -64, exp x lies in [0, exp(-64)]: the precision the squarings need stays that of |x| <= 64. *)
Definition iexpc (k : nat) (x : Q) : ival :=
  if Qle_bool x (-64) then (0%Q, snd (iexp k (-64))) else iexp k x.

Lemma iexpc_sound k x : (x <= 0)%Q -> 0 <= Q2R (fst (iexpc k x)) /\ encl (iexpc k x) (exp (Q2R x)).
Proof.
  intros Hx. unfold iexpc. destruct (Qle_bool x (-64)) eqn:Eb; [|apply iexp_sound; exact Hx].
  apply qleb_le in Eb. simpl. rewrite Q2R_0. split; [lra|]. unfold encl; simpl. rewrite Q2R_0.
  split; [left; apply exp_pos|].
  assert (Hneg : (-64 <= 0)%Q) by (unfold Qle; simpl; lia).
  destruct (iexp_sound k (-64) Hneg) as [_ [_ Hh]].
  eapply Rle_trans; [|exact Hh].
  destruct (Rle_lt_or_eq_dec _ _ Eb) as [Hl| ->]; [left; apply exp_increasing; exact Hl|right; reflexivity].
Qed.

(* e / S for e in [a, b] (a >= 0) and S in [sa, sb] (sa > 0). *)
Definition idiv (e s : ival) : ival := ird ((fst e / snd s)%Q, (snd e / fst s)%Q).

Lemma idiv_sound e s x y : 0 <= Q2R (fst e) -> 0 < Q2R (fst s) -> encl e x -> encl s y -> encl (idiv e s) (x / y).
Proof.
  intros He Hs [H1 H2] [H3 H4]. apply ird_sound. unfold encl; simpl.
  assert (Hs' : ~ (fst s == 0)%Q) by (intros E; apply Qeq_eqR in E; rewrite Q2R_0 in E; lra).
  assert (Hs'' : ~ (snd s == 0)%Q) by (intros E; apply Qeq_eqR in E; rewrite Q2R_0 in E; lra).
  rewrite !Q2R_div by assumption. split.
  - unfold Rdiv. apply Rmult_le_compat; try lra.
    + left. apply Rinv_0_lt_compat. lra.
    + apply Rinv_le_contravar; lra.
  - unfold Rdiv. apply Rmult_le_compat; try lra.
    + left. apply Rinv_0_lt_compat. lra.
    + apply Rinv_le_contravar; lra.
Qed.

End Intervals.

(* ------------------------------------------------------------------------------------------------ *)
(* The model over R.                                                                                 *)

Fixpoint qsum (n : nat) (f : nat -> Q) : Q := match n with O => 0%Q | S m => (qsum m f + f m)%Q end.

Lemma qsum_ge m f g : (forall i, (i < m)%nat -> g i <= Q2R (f i)) -> rsum m g <= Q2R (qsum m f).
Proof.
  induction m; intros Hfg; simpl; [rewrite Q2R_0; lra|].
  rewrite Q2R_plus. apply Rplus_le_compat; [apply IHm; intros; apply Hfg; lia|apply Hfg; lia].
Qed.

(* a / b with the common factors 2 taken out (constant work per factor: the dyadic data's sums stay short). *)
Fixpoint strip2 (a : Z) (b : positive) : Q :=
  match b with
  | xO b' => match a with
             | Z0 => 0%Q
             | Zpos (xO a') => strip2 (Zpos a') b'
             | Zneg (xO a') => strip2 (Zneg a') b'
             | _ => Qmake a b
             end
  | _ => Qmake a b
  end.

Lemma strip2_eq b : forall a, Q2R (strip2 a b) = Q2R (Qmake a b).
Proof.
  induction b as [b IH|b IH|]; intros a; [reflexivity| |reflexivity].
  assert (Hb : 0 < IZR (Zpos b)) by (apply IZR_lt; reflexivity).
  destruct a as [|[a'|a'|]|[a'|a'|]]; cbn [strip2]; try reflexivity.
  - unfold Q2R; cbn [Qnum Qden]. change (IZR 0) with 0. ring.
  - rewrite IH. unfold Q2R; cbn [Qnum Qden]. rewrite (Pos2Z.inj_xO a'), (Pos2Z.inj_xO b), !mult_IZR. field. lra.
  - rewrite IH. unfold Q2R; cbn [Qnum Qden]. rewrite (Pos2Z.neg_xO a'), (Pos2Z.inj_xO b), !mult_IZR. field. lra.
Qed.

Definition qn (q : Q) : Q := strip2 (Qnum q) (Qden q).

Lemma qn_eq q : Q2R (qn q) = Q2R q.
Proof. unfold qn. rewrite strip2_eq. destruct q; reflexivity. Qed.

Fixpoint qsumn (n : nat) (f : nat -> Q) : Q := match n with O => 0%Q | S m => qn (qsumn m f + f m)%Q end.

Lemma qsumn_eq n f g : (forall i, (i < n)%nat -> Q2R (f i) = Q2R (g i)) -> Q2R (qsumn n f) = Q2R (qsum n g).
Proof.
  induction n; intros Hfg; simpl; [reflexivity|].
  rewrite qn_eq, !Q2R_plus. rewrite IHn by (intros; apply Hfg; lia). rewrite Hfg by lia. reflexivity.
Qed.

Definition at2 (m : list (list Q)) (i j : nat) : Q := nth j (nth i m []) 0%Q.
Definition at3 (m : list (list (list Q))) (h i j : nat) : Q := nth j (nth i (nth h m []) []) 0%Q.

(* The label rule of the checker: |y_hat - y| <= 2^-20 max(1, |y|). *)
Definition tolQ (y : Q) : Q := ((1 # pow2 20) * qmax 1 (Qabs y))%Q.

Section Model.
Variables (n d H dh dv dout T : nat).
Variables (E : list (list (list Q)))   (* T contexts, n rows of d *)
          (e : list (list Q))          (* T queries of d *)
          (WQ WK WV : list (list (list Q)))  (* H matrices d x dh, d x dh, d x dv *)
          (WO WD : list (list Q))      (* H dv x d, d x dout *)
          (skip : bool).

(* (1) a_h(t)_j = sum_k (E_t,j W_K^h)_k ((W_Q^h)^T e_t)_k *)
Definition logit (h t j : nat) : Q :=
  qsum dh (fun k => qsum d (fun c => at3 E t j c * at3 WK h c k)%Q * qsum d (fun c => at3 WQ h c k * at2 e t c)%Q)%Q.

(* (2) softmax with Coq's real exp *)
Definition alpha (h t j : nat) : R := exp (Q2R (logit h t j)) / rsum n (fun k => exp (Q2R (logit h t k))).

(* (3) p_h(t) = E_t^T alpha_h(t); row t of Z is [p_1(t); ...; p_H(t)] *)
Definition p (h t c : nat) : R := rsum n (fun j => alpha h t j * Q2R (at3 E t j c)).
Definition Z (t col : nat) : R := p (col / d) t (col mod d).

(* (4)-(6) *)
Definition ov (h t v : nat) : R := rsum d (fun c => Q2R (at3 WV h c v) * p h t c).
Definition o (t k : nat) : R :=
  rsum (H * dv) (fun hv => Q2R (at2 WO hv k) * ov (hv / dv) t (hv mod dv)) + (if skip then Q2R (at2 e t k) else 0).
Definition yhat (t r : nat) : R := rsum d (fun k => Q2R (at2 WD k r) * o t k).

(* ------------------------------------------------------------------------------------------------ *)
(* The check over Q.                                                                                 *)

Variables (prec kexp : nat).

(* The logits of head h on example t, computed with common factors 2 taken out as they go: equal to logit. *)
Definition logits (t h : nat) : list Q :=
  let v := map (fun k => qsumn d (fun c => qn (at3 WQ h c k * at2 e t c))) (seq 0 dh) in
  map (fun j => qsumn dh (fun k => qn (qsumn d (fun c => qn (at3 E t j c * at3 WK h c k)) * nth k v 0%Q)%Q))
      (seq 0 n).
Definition qmaxl (l : list Q) : Q := fold_right qmax (hd 0%Q l) l.
Definition exps (t h : nat) : list ival :=
  let a := logits t h in let m := qmaxl a in map (fun x => iexpc prec kexp (qn (x - m))%Q) a.
Definition isuml (l : list ival) : ival := isum prec (length l) (fun j => nth j l (0%Q, 0%Q)).
(* The softmax weights; [0, 1] when the sum's enclosure does not stay above 0. *)
Definition alphas (t h : nat) : list ival :=
  let es := exps t h in let s := isuml es in
  if qltb 0 (fst s) then map (fun x => idiv prec x s) es else map (fun _ => (0%Q, 1%Q)) es.

Definition Zrow (t : nat) : list ival :=
  let A := map (alphas t) (seq 0 H) in
  map (fun col => isum prec n (fun j => iscale prec (at3 E t j (col mod d)) (nth j (nth (col / d) A []) (0%Q, 0%Q))))
      (seq 0 (H * d)).
Definition Zrows : list (list ival) := map Zrow (seq 0 T).

Definition iat (m : list (list ival)) (i j : nat) : ival := nth j (nth i m []) (0%Q, 0%Q).

(* An upper bound of |delta - x| for x in i. *)
Definition absdev (delta : Q) (i : ival) : Q := qmax (Qabs (delta - fst i)) (Qabs (delta - snd i)).

Lemma Q2R_abs q : Q2R (Qabs q) = Rabs (Q2R q).
Proof.
  destruct (Qlt_le_dec q 0) as [Hq|Hq].
  - rewrite (Qeq_eqR _ _ (Qabs_neg q (Qlt_le_weak _ _ Hq))), Q2R_opp.
    apply Qlt_Rlt in Hq. rewrite Q2R_0 in Hq. rewrite Rabs_left; lra.
  - rewrite (Qeq_eqR _ _ (Qabs_pos q Hq)).
    apply Qle_Rle in Hq. rewrite Q2R_0 in Hq. rewrite Rabs_right; lra.
Qed.

Lemma qmax_ge a b : Q2R a <= Q2R (qmax a b) /\ Q2R b <= Q2R (qmax a b).
Proof.
  unfold qmax. destruct (Qle_bool a b) eqn:Eb.
  - apply qleb_le in Eb. lra.
  - split; [lra|]. left. apply Qlt_Rlt, Qnot_le_lt. intros Hle. apply Qle_bool_iff in Hle. congruence.
Qed.

Lemma absdev_sound delta i x : encl i x -> Rabs (Q2R delta - x) <= Q2R (absdev delta i).
Proof.
  intros [H1 H2]. unfold absdev. destruct (qmax_ge (Qabs (delta - fst i)) (Qabs (delta - snd i))) as [A B].
  rewrite Q2R_abs, Q2R_minus in A, B.
  destruct (Rle_dec 0 (Q2R delta - x)).
  - rewrite Rabs_right by lra. eapply Rle_trans; [|exact A].
    eapply Rle_trans; [|apply Rle_abs]. lra.
  - rewrite Rabs_left by lra. eapply Rle_trans; [|exact B].
    rewrite <- Rabs_Ropp. eapply Rle_trans; [|apply Rle_abs]. lra.
Qed.

Definition rank_row_bound (Zl : list (list ival)) (C : list nat) (Rm : list (list Q)) (a : nat) : Q :=
  qsum T (fun i => up prec (absdev (if Nat.eqb a i then 1 else 0)%Q
                                  (isum prec T (fun l => iscale prec (at2 Rm a l) (iat Zl i (nth l C 0%nat)))))).

(* Zl: Zrows (computed once for both checks of check_labels and check_classes). *)
Definition rank_check (Zl : list (list ival)) (C : list nat) (Rm : list (list Q)) : bool :=
  (0 <? d)%nat && (length C =? T)%nat && forallb (fun col => col <? H * d)%nat C &&
  forallb (fun a => qltb (rank_row_bound Zl C Rm a) 1) (seq 0 T).

Definition yrow (t : nat) (row : list ival) : list ival :=
  let ovs := map (fun hv => isum prec d (fun c => iscale prec (at3 WV (hv / dv) c (hv mod dv))
                                                  (nth ((hv / dv) * d + c) row (0%Q, 0%Q))))
                 (seq 0 (H * dv)) in
  let os := map (fun k => iadd prec (isum prec (H * dv) (fun hv => iscale prec (at2 WO hv k) (nth hv ovs (0%Q, 0%Q))))
                                 (if skip then (at2 e t k, at2 e t k) else (0%Q, 0%Q))) (seq 0 d) in
  map (fun r => isum prec d (fun k => iscale prec (at2 WD k r) (nth k os (0%Q, 0%Q)))) (seq 0 dout).

Definition yrows (Zl : list (list ival)) : list (list ival) := map (fun t => yrow t (nth t Zl [])) (seq 0 T).

Definition labels_check (Zl : list (list ival)) (Y : list (list Q)) : bool :=
  (0 <? d)%nat && (0 <? dv)%nat &&
  let yl := yrows Zl in
  forallb (fun t => forallb (fun r => let i := iat yl t r in let y := at2 Y t r in
             Qle_bool (y - tolQ y) (fst i) && Qle_bool (snd i) (y + tolQ y))%Q (seq 0 dout)) (seq 0 T).

Definition classes_check (Zl : list (list ival)) (cls : list nat) : bool :=
  (0 <? d)%nat && (0 <? dv)%nat &&
  let yl := yrows Zl in
  forallb (fun t => let k := nth t cls 0%nat in (k <? dout)%nat &&
             forallb (fun r => Nat.eqb r k || qltb (snd (iat yl t r)) (fst (iat yl t k))) (seq 0 dout)) (seq 0 T).

Definition check_labels (C : list nat) (Rm Y : list (list Q)) : bool :=
  let Zl := Zrows in rank_check Zl C Rm && labels_check Zl Y.
Definition check_classes (C : list nat) (Rm : list (list Q)) (cls : list nat) : bool :=
  let Zl := Zrows in rank_check Zl C Rm && classes_check Zl cls.

(* ------------------------------------------------------------------------------------------------ *)
(* Soundness.                                                                                        *)

Lemma nth_map_seq {A} (f : nat -> A) m i z : (i < m)%nat -> nth i (map f (seq 0 m)) z = f i.
Proof.
  intros Hi. rewrite nth_indep with (d' := f 0%nat) by (rewrite map_length, seq_length; exact Hi).
  rewrite map_nth, seq_nth by exact Hi. reflexivity.
Qed.

Lemma nth_map_lt {A B} (f : A -> B) l i za zb : (i < length l)%nat -> nth i (map f l) zb = f (nth i l za).
Proof. intros Hi. rewrite nth_indep with (d' := f za) by (rewrite map_length; exact Hi). apply map_nth. Qed.

Lemma qmaxl_ge l : forall x, In x l -> (x <= qmaxl l)%Q.
Proof.
  unfold qmaxl. generalize (hd 0%Q l). induction l as [|b l IH]; simpl; intros z x Hx; [contradiction|].
  unfold qmax at 1. destruct (Qle_bool b (fold_right qmax z l)) eqn:Eb; destruct Hx as [->|Hx].
  - apply Qle_bool_iff. exact Eb.
  - apply IH. exact Hx.
  - apply Qle_refl.
  - apply Qle_trans with (fold_right qmax z l); [apply IH; exact Hx|].
    apply Qlt_le_weak, Qnot_le_lt. intros Hle. apply Qle_bool_iff in Hle. congruence.
Qed.

Lemma logits_length t h : length (logits t h) = n.
Proof. unfold logits. cbv zeta. rewrite map_length, seq_length. reflexivity. Qed.

Lemma logits_eq t h j : (j < n)%nat -> Q2R (nth j (logits t h) 0%Q) = Q2R (logit h t j).
Proof.
  intros Hj. unfold logits. cbv zeta. rewrite nth_map_seq by exact Hj. unfold logit.
  apply qsumn_eq. intros k Hk. rewrite qn_eq, !Q2R_mult. rewrite nth_map_seq by exact Hk.
  f_equal; apply qsumn_eq; intros c Hc; rewrite qn_eq; reflexivity.
Qed.

Lemma alpha_shift h t j (g : nat -> Q) m : (j < n)%nat -> (forall k, (k < n)%nat -> Q2R (g k) = Q2R (logit h t k)) ->
  alpha h t j = exp (Q2R (qn (g j - m))) / rsum n (fun k => exp (Q2R (qn (g k - m)))).
Proof.
  intros Hj Hg. unfold alpha.
  assert (Ex1 : forall k, (k < n)%nat -> exp (Q2R (qn (g k - m))) = exp (- Q2R m) * exp (Q2R (logit h t k))).
  { intros k Hk. rewrite qn_eq, Q2R_minus, Hg by exact Hk. rewrite <- exp_plus. f_equal. ring. }
  rewrite (Ex1 j Hj).
  rewrite (rsum_ext n (fun k => exp (Q2R (qn (g k - m)))) (fun k => exp (- Q2R m) * exp (Q2R (logit h t k))))
    by exact Ex1.
  rewrite rsum_scal.
  assert (Hs : 0 < rsum n (fun k => exp (Q2R (logit h t k)))) by (apply rsum_pos; [lia|intros; apply exp_pos]).
  pose proof (exp_pos (- Q2R m)). field. lra.
Qed.


Lemma exps_sound t h j : (j < n)%nat ->
  0 <= Q2R (fst (nth j (exps t h) (0%Q, 0%Q))) /\
  encl (nth j (exps t h) (0%Q, 0%Q)) (exp (Q2R (qn (nth j (logits t h) 0%Q - qmaxl (logits t h))))).
Proof.
  intros Hj. unfold exps. cbv zeta.
  rewrite (nth_map_lt _ _ _ 0%Q) by (rewrite logits_length; exact Hj).
  apply iexpc_sound.
  assert (Hin : In (nth j (logits t h) 0%Q) (logits t h)) by (apply nth_In; rewrite logits_length; exact Hj).
  pose proof (Qle_Rle _ _ (qmaxl_ge _ _ Hin)) as Hm.
  apply Rle_Qle. rewrite qn_eq, Q2R_minus, Q2R_0. lra.
Qed.


Lemma alphas_sound t h j : (j < n)%nat -> encl (nth j (alphas t h) (0%Q, 0%Q)) (alpha h t j).
Proof.
  intros Hj. unfold alphas. cbv zeta.
  assert (Hlen : length (exps t h) = n) by (unfold exps; cbv zeta; rewrite map_length, logits_length; reflexivity).
  destruct (qltb 0 (fst (isuml (exps t h)))) eqn:Hs.
  - rewrite (nth_map_lt _ _ _ (0%Q, 0%Q)); [|lia].
    rewrite (alpha_shift h t j (fun k => nth k (logits t h) 0%Q) (qmaxl (logits t h)) Hj) by (intros; apply logits_eq; assumption).
    destruct (exps_sound t h j Hj) as [H0 H1].
    apply idiv_sound; [exact H0| |exact H1|].
    + apply qltb_lt in Hs. rewrite Q2R_0 in Hs. exact Hs.
    + unfold isuml. rewrite Hlen. apply isum_sound. intros k Hk. apply exps_sound. exact Hk.
  - rewrite (nth_map_lt _ _ _ (0%Q, 0%Q)); [|lia]. unfold encl; cbn [fst snd]. rewrite Q2R_0, Q2R_1.
    unfold alpha.
    assert (Hp : 0 < rsum n (fun k => exp (Q2R (logit h t k)))) by (apply rsum_pos; [lia|intros; apply exp_pos]).
    assert (Hj' : exp (Q2R (logit h t j)) <= rsum n (fun k => exp (Q2R (logit h t k))))
      by (apply (rsum_ge_term n (fun k => exp (Q2R (logit h t k))) j); [intros; left; apply exp_pos|exact Hj]).
    pose proof (exp_pos (Q2R (logit h t j))).
    split.
    + unfold Rdiv. left. apply Rmult_lt_0_compat; [lra|apply Rinv_0_lt_compat; lra].
    + apply (Rmult_le_reg_r (rsum n (fun k => exp (Q2R (logit h t k))))); [lra|].
      unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.
Qed.

Lemma Zrows_sound t col : (0 < d)%nat -> (t < T)%nat -> (col < H * d)%nat ->
  encl (iat Zrows t col) (Z t col).
Proof.
  intros Hd Ht Hc. unfold iat, Zrows. rewrite nth_map_seq by exact Ht. unfold Zrow.
  rewrite nth_map_seq by exact Hc. unfold Z, p.
  assert (Hh : (col / d < H)%nat) by (apply Nat.div_lt_upper_bound; lia).
  rewrite nth_map_seq by exact Hh.
  apply isum_sound. intros j Hj. rewrite Rmult_comm. apply iscale_sound. apply alphas_sound; assumption.
Qed.

Theorem rows_independent_sound C Rm : rank_check Zrows C Rm = true ->
  forall c : nat -> R, (forall col, (col < H * d)%nat -> rsum T (fun t => c t * Z t col) = 0) ->
  forall t, (t < T)%nat -> c t = 0.
Proof.
  unfold rank_check. intros Hck c Hc.
  apply andb_prop in Hck as [Hck Hrows]. apply andb_prop in Hck as [Hck Hcols].
  apply andb_prop in Hck as [Hd Hlen].
  apply Nat.ltb_lt in Hd. apply Nat.eqb_eq in Hlen. rewrite forallb_forall in Hcols, Hrows.
  assert (HC : forall l, (l < T)%nat -> (nth l C 0 < H * d)%nat).
  { intros l Hl. apply Nat.ltb_lt, Hcols, nth_In. lia. }
  apply (independent_of_near_inverse T (fun l i => Z i (nth l C 0%nat)) (fun a l => Q2R (at2 Rm a l))).
  - intros a Ha. specialize (Hrows a (proj2 (in_seq _ _ _) (conj (Nat.le_0_l _) Ha))).
    apply qltb_lt in Hrows. rewrite Q2R_1 in Hrows. eapply Rle_lt_trans; [|exact Hrows].
    unfold rank_row_bound. clear Hrows. apply qsum_ge. intros i Hi.
    eapply Rle_trans; [|apply Qle_Rle, up_ge].
    set (J := isum prec T _).
    assert (HJ : encl J (rsum T (fun l => Q2R (at2 Rm a l) * Z i (nth l C 0%nat)))).
    { apply isum_sound. intros l Hl. apply iscale_sound. apply Zrows_sound; auto. }
    eapply Rle_trans; [|apply (absdev_sound _ _ _ HJ)].
    destruct (Nat.eqb a i); rewrite ?Q2R_1, ?Q2R_0; lra.
  - intros l Hl. apply Hc. apply HC. exact Hl.
Qed.

Lemma in_seq0 i m : (i < m)%nat -> In i (seq 0 m).
Proof. intros Hi. apply in_seq. lia. Qed.

Lemma yrows_sound t r : (0 < d)%nat -> (0 < dv)%nat -> (t < T)%nat -> (r < dout)%nat ->
  encl (iat (yrows Zrows) t r) (yhat t r).
Proof.
  intros Hd Hdv Ht Hr. unfold iat, yrows. rewrite nth_map_seq by exact Ht.
  unfold yrow. cbv zeta. rewrite nth_map_seq by exact Hr. unfold yhat.
  apply isum_sound. intros k Hk. apply iscale_sound. rewrite nth_map_seq by exact Hk. unfold o.
  apply iadd_sound.
  - apply isum_sound. intros hv Hhv. apply iscale_sound. rewrite nth_map_seq by exact Hhv. unfold ov.
    apply isum_sound. intros c Hc. apply iscale_sound.
    assert (Hh : (hv / dv < H)%nat) by (apply Nat.div_lt_upper_bound; lia).
    assert (Hcol : ((hv / dv) * d + c < H * d)%nat) by nia.
    pose proof (Zrows_sound t _ Hd Ht Hcol) as HZ. unfold iat in HZ. unfold Z in HZ.
    assert (E1 : (((hv / dv) * d + c) / d = hv / dv)%nat) by (rewrite Nat.div_add_l by lia; rewrite (Nat.div_small c d) by lia; lia).
    assert (E2 : (((hv / dv) * d + c) mod d = c)%nat) by (rewrite Nat.add_comm, Nat.mod_add by lia; apply Nat.mod_small; lia).
    rewrite E1, E2 in HZ. exact HZ.
  - destruct skip; unfold encl; simpl; rewrite ?Q2R_0; lra.
Qed.

Theorem labels_sound Y : labels_check Zrows Y = true ->
  forall t r, (t < T)%nat -> (r < dout)%nat -> Rabs (yhat t r - Q2R (at2 Y t r)) <= Q2R (tolQ (at2 Y t r)).
Proof.
  unfold labels_check. cbv zeta. intros Hck t r Ht Hr.
  apply andb_prop in Hck as [Hck Hall]. apply andb_prop in Hck as [Hd Hdv]. apply Nat.ltb_lt in Hd, Hdv.
  rewrite forallb_forall in Hall. specialize (Hall t (in_seq0 _ _ Ht)).
  rewrite forallb_forall in Hall. specialize (Hall r (in_seq0 _ _ Hr)).
  apply andb_prop in Hall as [H1 H2]. apply qleb_le in H1, H2.
  rewrite Q2R_minus in H1. rewrite Q2R_plus in H2.
  destruct (yrows_sound t r Hd Hdv Ht Hr) as [A B].
  apply Rabs_le. lra.
Qed.

Theorem classes_sound cls : classes_check Zrows cls = true ->
  forall t, (t < T)%nat -> (nth t cls 0 < dout)%nat /\
    forall r, (r < dout)%nat -> r <> nth t cls 0%nat -> yhat t r < yhat t (nth t cls 0%nat).
Proof.
  unfold classes_check. cbv zeta. intros Hck t Ht.
  apply andb_prop in Hck as [Hck Hall]. apply andb_prop in Hck as [Hd Hdv]. apply Nat.ltb_lt in Hd, Hdv.
  rewrite forallb_forall in Hall. specialize (Hall t (in_seq0 _ _ Ht)).
  apply andb_prop in Hall as [Hk Hall]. apply Nat.ltb_lt in Hk. split; [exact Hk|].
  intros r Hr Hne. rewrite forallb_forall in Hall. specialize (Hall r (in_seq0 _ _ Hr)).
  apply orb_prop in Hall as [Eb|Eb]; [apply Nat.eqb_eq in Eb; contradiction|].
  apply qltb_lt in Eb.
  destruct (yrows_sound t r Hd Hdv Ht Hr) as [A B].
  destruct (yrows_sound t (nth t cls 0%nat) Hd Hdv Ht Hk) as [C D].
  lra.
Qed.

(* The two checks of a certificate with real labels (or classes) on one computation of Z's enclosure. *)
Theorem check_labels_sound C Rm Y : check_labels C Rm Y = true ->
  (forall c : nat -> R, (forall col, (col < H * d)%nat -> rsum T (fun t => c t * Z t col) = 0) ->
     forall t, (t < T)%nat -> c t = 0) /\
  (forall t r, (t < T)%nat -> (r < dout)%nat -> Rabs (yhat t r - Q2R (at2 Y t r)) <= Q2R (tolQ (at2 Y t r))).
Proof.
  unfold check_labels. cbv zeta. intros Hck. apply andb_prop in Hck as [H1 H2].
  split; [apply (rows_independent_sound C Rm H1)|apply (labels_sound Y H2)].
Qed.

Theorem check_classes_sound C Rm cls : check_classes C Rm cls = true ->
  (forall c : nat -> R, (forall col, (col < H * d)%nat -> rsum T (fun t => c t * Z t col) = 0) ->
     forall t, (t < T)%nat -> c t = 0) /\
  (forall t, (t < T)%nat -> (nth t cls 0 < dout)%nat /\
     forall r, (r < dout)%nat -> r <> nth t cls 0%nat -> yhat t r < yhat t (nth t cls 0%nat)).
Proof.
  unfold check_classes. cbv zeta. intros Hck. apply andb_prop in Hck as [H1 H2].
  split; [apply (rows_independent_sound C Rm H1)|apply (classes_sound cls H2)].
Qed.

End Model.
