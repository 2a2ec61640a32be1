"""Plain, frozen data objects shared by every stage: the inputs (Capture, Options, Plan ...)
and the Report every renderer reads. Times are integer ns (``*_ns``). No polars import at
run time, so the CLI imports this cheaply; each name is re-exported explicitly."""

from __future__ import annotations

from overlap_check.model.inputs import Capture as Capture
from overlap_check.model.inputs import CoreLimit as CoreLimit
from overlap_check.model.inputs import DeviceConfig as DeviceConfig
from overlap_check.model.inputs import DeviceCores as DeviceCores
from overlap_check.model.inputs import Options as Options
from overlap_check.model.inputs import Plan as Plan
from overlap_check.model.inputs import ProfilerStepTime as ProfilerStepTime
from overlap_check.model.inputs import Thresholds as Thresholds
from overlap_check.model.report import AppliedLimit as AppliedLimit
from overlap_check.model.report import BaselineDelta as BaselineDelta
from overlap_check.model.report import CommunicationStep as CommunicationStep
from overlap_check.model.report import ContentionInterval as ContentionInterval
from overlap_check.model.report import CoresResult as CoresResult
from overlap_check.model.report import CoreViolation as CoreViolation
from overlap_check.model.report import RankCommunication as RankCommunication
from overlap_check.model.report import ReferenceDelta as ReferenceDelta
from overlap_check.model.report import ReferenceResult as ReferenceResult
from overlap_check.model.report import Report as Report
from overlap_check.model.report import StepWallDelta as StepWallDelta
from overlap_check.model.results import BarrierCandidate as BarrierCandidate
from overlap_check.model.results import Diagnosis as Diagnosis
from overlap_check.model.results import Evidence as Evidence
from overlap_check.model.results import LayerFigures as LayerFigures
from overlap_check.model.results import Occurrence as Occurrence
from overlap_check.model.results import PlanResult as PlanResult
from overlap_check.model.results import PlanRun as PlanRun
from overlap_check.model.results import PlanWalls as PlanWalls
from overlap_check.model.results import RankStreamSummary as RankStreamSummary
from overlap_check.model.results import RunInfo as RunInfo
from overlap_check.model.results import ShapeCount as ShapeCount
from overlap_check.model.results import StepWall as StepWall
from overlap_check.model.results import StreamPair as StreamPair
from overlap_check.model.results import StreamPairRun as StreamPairRun
from overlap_check.model.results import StreamStat as StreamStat
from overlap_check.model.results import TailOp as TailOp
from overlap_check.model.results import deciding_occurrence as deciding_occurrence
from overlap_check.model.vocabulary import DEFAULT_FAIL_ON as DEFAULT_FAIL_ON
from overlap_check.model.vocabulary import FAKE_SHARE as FAKE_SHARE
from overlap_check.model.vocabulary import MAX_INPUT_SIZE as MAX_INPUT_SIZE
from overlap_check.model.vocabulary import MAX_LISTED_LAYERS as MAX_LISTED_LAYERS
from overlap_check.model.vocabulary import MODULE_SCOPE as MODULE_SCOPE
from overlap_check.model.vocabulary import SCHEMA_VERSION as SCHEMA_VERSION
from overlap_check.model.vocabulary import BaselineFigure as BaselineFigure
from overlap_check.model.vocabulary import Cause as Cause
from overlap_check.model.vocabulary import CoresSource as CoresSource
from overlap_check.model.vocabulary import DecidedBy as DecidedBy
from overlap_check.model.vocabulary import EvidenceKind as EvidenceKind
from overlap_check.model.vocabulary import ExecutionPath as ExecutionPath
from overlap_check.model.vocabulary import FailOn as FailOn
from overlap_check.model.vocabulary import Order as Order
from overlap_check.model.vocabulary import Per as Per
from overlap_check.model.vocabulary import PlanMode as PlanMode
from overlap_check.model.vocabulary import SideKind as SideKind
from overlap_check.model.vocabulary import Stage as Stage
from overlap_check.model.vocabulary import Verdict as Verdict
from overlap_check.model.vocabulary import choices_of as choices_of
from overlap_check.model.vocabulary import rank_text as rank_text
